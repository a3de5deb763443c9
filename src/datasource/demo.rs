//! The seeds' demo data sets (shop, sales).
