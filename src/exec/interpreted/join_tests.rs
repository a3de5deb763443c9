use super::*;
use crate::exec::interpreted::test_util::*;
use arrow::array::BooleanArray;
use arrow::datatypes::DataType;

struct Data {
    left: Vec<Attribute>,
    right: Vec<Attribute>,
    lb: RecordBatch,
    rb: RecordBatch,
}

/// left (lk, lv): (1,a) (2,b) (NULL,n) (3,c) (2,b2)
/// right (rk, rw, flag): (2,20,T) (2,21,F) (NULL,0,T) (4,40,T) (1,10,NULL)
fn data() -> Data {
    let left = vec![attr("lk", DataType::Int64), attr("lv", DataType::Utf8)];
    let right = vec![attr("rk", DataType::Int64), attr("rw", DataType::Int64), attr("flag", DataType::Boolean)];
    let lb = batch(&left, vec![ints(&[Some(1), Some(2), None, Some(3), Some(2)]), strs(&[Some("a"), Some("b"), Some("n"), Some("c"), Some("b2")])]);
    let flag: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), Some(false), Some(true), Some(true), None]));
    let rb = batch(&right, vec![ints(&[Some(2), Some(2), None, Some(4), Some(1)]), ints(&[Some(20), Some(21), Some(0), Some(40), Some(10)]), flag]);
    Data { left, right, lb, rb }
}

/// Every output row rendered "v1|v2|...", sorted.
fn render(out: &[RecordBatch]) -> Vec<String> {
    if out.is_empty() {
        return vec![];
    }
    let cols: Vec<Vec<String>> = (0..out[0].num_columns()).map(|i| col_str(out, i)).collect();
    let mut rows: Vec<String> = (0..rows(out)).map(|r| cols.iter().map(|c| c[r].as_str()).collect::<Vec<_>>().join("|")).collect();
    rows.sort();
    rows
}

fn hj(d: &Data, jt: JoinType, cond: Option<&Expr>, build: BuildSide) -> Vec<String> {
    let out = hash_join(
        jt,
        false,
        &[d.left[0].expr()],
        &[d.right[0].expr()],
        cond,
        build,
        (&d.left, vec![d.lb.clone()]),
        (&d.right, vec![d.rb.clone()]),
    )
    .unwrap();
    render(&out)
}

fn s(v: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

const INNER: [&str; 5] = ["1|a|1|10|NULL", "2|b|2|20|true", "2|b|2|21|false", "2|b2|2|20|true", "2|b2|2|21|false"];

#[test]
fn hash_join_every_type_null_keys_never_match() {
    let d = data();
    for build in [BuildSide::BuildLeft, BuildSide::BuildRight] {
        assert_eq!(hj(&d, JoinType::Inner, None, build), s(&INNER));
        let left_extra = ["NULL|n|NULL|NULL|NULL", "3|c|NULL|NULL|NULL"];
        let right_extra = ["NULL|NULL|NULL|0|true", "NULL|NULL|4|40|true"];
        assert_eq!(hj(&d, JoinType::LeftOuter, None, build), s(&[&INNER[..], &left_extra[..]].concat()));
        assert_eq!(hj(&d, JoinType::RightOuter, None, build), s(&[&INNER[..], &right_extra[..]].concat()));
        assert_eq!(hj(&d, JoinType::FullOuter, None, build), s(&[&INNER[..], &left_extra[..], &right_extra[..]].concat()));
        assert_eq!(hj(&d, JoinType::LeftSemi, None, build), s(&["1|a", "2|b", "2|b2"]));
        assert_eq!(hj(&d, JoinType::LeftAnti, None, build), s(&["NULL|n", "3|c"]));
    }
}

#[test]
fn hash_join_condition_failures_are_null_extended() {
    let d = data();
    let cond = d.right[2].expr();
    for build in [BuildSide::BuildLeft, BuildSide::BuildRight] {
        let inner = ["2|b|2|20|true", "2|b2|2|20|true"];
        assert_eq!(hj(&d, JoinType::Inner, Some(&cond), build), s(&inner));
        let left_extra = ["1|a|NULL|NULL|NULL", "NULL|n|NULL|NULL|NULL", "3|c|NULL|NULL|NULL"];
        let right_extra = ["NULL|NULL|2|21|false", "NULL|NULL|NULL|0|true", "NULL|NULL|4|40|true", "NULL|NULL|1|10|NULL"];
        assert_eq!(hj(&d, JoinType::LeftOuter, Some(&cond), build), s(&[&inner[..], &left_extra[..]].concat()));
        assert_eq!(hj(&d, JoinType::RightOuter, Some(&cond), build), s(&[&inner[..], &right_extra[..]].concat()));
        assert_eq!(hj(&d, JoinType::FullOuter, Some(&cond), build), s(&[&inner[..], &left_extra[..], &right_extra[..]].concat()));
        assert_eq!(hj(&d, JoinType::LeftSemi, Some(&cond), build), s(&["2|b", "2|b2"]));
        assert_eq!(hj(&d, JoinType::LeftAnti, Some(&cond), build), s(&["1|a", "NULL|n", "3|c"]));
    }
}

#[test]
fn hash_join_string_keys_and_output_nullability() {
    let (a, b) = (attr("a", DataType::Utf8), attr("b", DataType::Utf8));
    let (mut a2, mut b2) = (a.clone(), b.clone());
    a2.nullable = false;
    b2.nullable = false;
    let lb = batch(&[a2.clone()], vec![strs(&[Some("x"), Some("y"), Some("x")])]);
    let rb = batch(&[b2.clone()], vec![strs(&[Some("x"), Some("z")])]);
    let out = hash_join(JoinType::FullOuter, false, &[a2.expr()], &[b2.expr()], None, BuildSide::BuildLeft, (&[a2.clone()], vec![lb]), (&[b2.clone()], vec![rb]))
        .unwrap();
    assert!(out[0].schema().field(0).is_nullable() && out[0].schema().field(1).is_nullable());
    assert_eq!(render(&out), s(&["x|x", "x|x", "y|NULL", "NULL|z"]));
}

#[test]
fn outer_join_against_an_empty_side() {
    let d = data();
    let out = hash_join(
        JoinType::LeftOuter,
        false,
        &[d.left[0].expr()],
        &[d.right[0].expr()],
        None,
        BuildSide::BuildRight,
        (&d.left, vec![d.lb.clone()]),
        (&d.right, vec![]),
    )
    .unwrap();
    assert_eq!(rows(&out), 5);
    assert_eq!(out[0].num_columns(), 5);
    let nl = nested_loop_join(JoinType::Inner, None, (&d.left, vec![]), (&d.right, vec![d.rb.clone()])).unwrap();
    assert_eq!(rows(&nl), 0);
}

#[test]
fn nested_loop_join_all_types() {
    let d = data();
    let cond = d.right[2].expr(); // true for right rows 0, 2, 3
    let nl = |jt: JoinType, c: Option<&Expr>| {
        rows(&nested_loop_join(jt, c, (&d.left, vec![d.lb.clone()]), (&d.right, vec![d.rb.clone()])).unwrap())
    };
    assert_eq!(nl(JoinType::Cross, None), 25);
    assert_eq!(nl(JoinType::Inner, Some(&cond)), 15);
    assert_eq!(nl(JoinType::LeftOuter, Some(&cond)), 15);
    assert_eq!(nl(JoinType::RightOuter, Some(&cond)), 17);
    assert_eq!(nl(JoinType::FullOuter, Some(&cond)), 17);
    assert_eq!(nl(JoinType::LeftSemi, Some(&cond)), 5);
    assert_eq!(nl(JoinType::LeftAnti, Some(&cond)), 0);
    let never = Expr::lit(crate::types::ScalarValue::Boolean(false));
    assert_eq!(nl(JoinType::LeftAnti, Some(&never)), 5);
    assert_eq!(nl(JoinType::FullOuter, Some(&never)), 10);
    // Keyless hash_join falls back to the nested loop.
    let out = hash_join(JoinType::Cross, false, &[], &[], None, BuildSide::BuildRight, (&d.left, vec![d.lb.clone()]), (&d.right, vec![d.rb.clone()]));
    assert_eq!(rows(&out.unwrap()), 25);
}

#[test]
fn hash_join_with_a_comparison_condition() {
    let d = data();
    let cond = d.right[1].expr().binary(crate::expr::BinaryOp::Gt, Expr::lit(crate::types::ScalarValue::Int64(20)));
    let inner = ["2|b|2|21|false", "2|b2|2|21|false"];
    let left_extra = ["1|a|NULL|NULL|NULL", "NULL|n|NULL|NULL|NULL", "3|c|NULL|NULL|NULL"];
    assert_eq!(hj(&d, JoinType::LeftOuter, Some(&cond), BuildSide::BuildLeft), s(&[&inner[..], &left_extra[..]].concat()));
}

/// `batches` sorted ascending by `key`, NULLs first: what EnsureRequirements' Sort feeds a
/// sort-merge join.
fn sorted(attrs: &[Attribute], key: &Attribute, batches: Vec<RecordBatch>) -> Vec<RecordBatch> {
    let order = [crate::expr::SortOrder { expr: key.expr(), ascending: true, nulls_first: true }];
    super::super::sort(&order, attrs, batches, None).unwrap()
}

fn smj(d: &Data, jt: JoinType, cond: Option<&Expr>) -> Vec<String> {
    let out = sort_merge_join(
        jt,
        &[d.left[0].expr()],
        &[d.right[0].expr()],
        cond,
        (&d.left, sorted(&d.left, &d.left[0], vec![d.lb.clone()])),
        (&d.right, sorted(&d.right, &d.right[0], vec![d.rb.clone()])),
    )
    .unwrap();
    render(&out)
}

#[test]
fn sort_merge_join_matches_hash_join_for_every_type() {
    let d = data();
    let flag = d.right[2].expr();
    let gt = d.right[1].expr().binary(crate::expr::BinaryOp::Gt, Expr::lit(crate::types::ScalarValue::Int64(20)));
    let types = [JoinType::Inner, JoinType::LeftOuter, JoinType::RightOuter, JoinType::FullOuter, JoinType::LeftSemi, JoinType::LeftAnti];
    for jt in types {
        for cond in [None, Some(&flag), Some(&gt)] {
            assert_eq!(smj(&d, jt, cond), hj(&d, jt, cond, BuildSide::BuildLeft), "{jt:?} {cond:?}");
        }
    }
    // Pinned independently of the hash join: duplicates pair up, NULL keys never match.
    assert_eq!(smj(&d, JoinType::Inner, None), s(&INNER));
    assert_eq!(smj(&d, JoinType::LeftAnti, None), s(&["NULL|n", "3|c"]));
}

#[test]
fn sort_merge_join_two_keys_with_nulls_in_the_second_and_many_batches() {
    let (a, b, v) = (attr("a", DataType::Int64), attr("b", DataType::Utf8), attr("v", DataType::Int64));
    let (c, e, w) = (attr("c", DataType::Int64), attr("e", DataType::Utf8), attr("w", DataType::Int64));
    let left = [a.clone(), b.clone(), v.clone()];
    let right = [c.clone(), e.clone(), w.clone()];
    let l1 = batch(&left, vec![ints(&[Some(1), Some(1), Some(2)]), strs(&[Some("x"), None, Some("y")]), ints(&[Some(1), Some(2), Some(3)])]);
    let l2 = batch(&left, vec![ints(&[Some(1), Some(3)]), strs(&[Some("x"), Some("z")]), ints(&[Some(4), Some(5)])]);
    let r1 = batch(&right, vec![ints(&[Some(1), Some(1)]), strs(&[None, Some("x")]), ints(&[Some(10), Some(20)])]);
    let r2 = batch(&right, vec![ints(&[Some(2), Some(3), Some(1)]), strs(&[Some("y"), Some("q"), Some("x")]), ints(&[Some(30), Some(40), Some(50)])]);
    let order = |x: &Attribute, y: &Attribute| {
        [x, y].map(|k| crate::expr::SortOrder { expr: k.expr(), ascending: true, nulls_first: true }).to_vec()
    };
    let ls = super::super::sort(&order(&a, &b), &left, vec![l1, l2], None).unwrap();
    let rs = super::super::sort(&order(&c, &e), &right, vec![r1, r2], None).unwrap();
    let out = sort_merge_join(JoinType::FullOuter, &[a.expr(), b.expr()], &[c.expr(), e.expr()], None, (&left, ls), (&right, rs)).unwrap();
    assert_eq!(
        render(&out),
        s(&[
            "1|x|1|1|x|20",
            "1|x|1|1|x|50",
            "1|x|4|1|x|20",
            "1|x|4|1|x|50",
            "2|y|3|2|y|30",
            "1|NULL|2|NULL|NULL|NULL",
            "3|z|5|NULL|NULL|NULL",
            "NULL|NULL|NULL|1|NULL|10",
            "NULL|NULL|NULL|3|q|40",
        ])
    );
}

#[test]
fn sort_merge_join_rejects_unsorted_input_and_takes_empty_sides() {
    let d = data();
    let err = sort_merge_join(JoinType::Inner, &[d.left[0].expr()], &[d.right[0].expr()], None, (&d.left, vec![d.lb.clone()]), (&d.right, vec![]))
        .unwrap_err();
    assert!(err.to_string().contains("left input is not sorted"), "{err}");
    let left = sorted(&d.left, &d.left[0], vec![d.lb.clone()]);
    let out = sort_merge_join(JoinType::LeftOuter, &[d.left[0].expr()], &[d.right[0].expr()], None, (&d.left, left), (&d.right, vec![])).unwrap();
    assert_eq!(rows(&out), 5);
    let out = sort_merge_join(JoinType::RightOuter, &[d.left[0].expr()], &[d.right[0].expr()], None, (&d.left, vec![]), (&d.right, vec![])).unwrap();
    assert_eq!(rows(&out), 0);
}

#[test]
fn sort_merge_outer_joins_keep_the_preserved_side_in_key_order() {
    let d = data();
    let run = |jt: JoinType| {
        sort_merge_join(
            jt,
            &[d.left[0].expr()],
            &[d.right[0].expr()],
            None,
            (&d.left, sorted(&d.left, &d.left[0], vec![d.lb.clone()])),
            (&d.right, sorted(&d.right, &d.right[0], vec![d.rb.clone()])),
        )
        .unwrap()
    };
    // Left keys NULL, 1, 2, 2, 3: the NULL and 3 rows null-extended in place.
    assert_eq!(col_i64(&run(JoinType::LeftOuter), 0), vec![None, Some(1), Some(2), Some(2), Some(2), Some(2), Some(3)]);
    // Right keys NULL, 1, 2, 2, 4 (columns 2.. are the right side's).
    assert_eq!(col_i64(&run(JoinType::RightOuter), 2), vec![None, Some(1), Some(2), Some(2), Some(2), Some(2), Some(4)]);
}

/// The null-aware anti join over `right` filtered to the rows where `keep` holds.
fn naaj(d: &Data, keep: &[bool]) -> Vec<String> {
    let kept: Vec<u32> = (0..keep.len() as u32).filter(|i| keep[*i as usize]).collect();
    let rb = RecordBatch::try_new(d.rb.schema(), take_all(&d.rb, &kept.into()).unwrap()).unwrap();
    let out = hash_join(JoinType::LeftAnti, true, &[d.left[0].expr()], &[d.right[0].expr()], None, BuildSide::BuildRight, (&d.left, vec![d.lb.clone()]), (&d.right, vec![rb]))
        .unwrap();
    render(&out)
}

#[test]
fn null_aware_anti_join_by_the_build_side() {
    let d = data();
    // A NULL build key (the third right row): no row stays.
    assert_eq!(naaj(&d, &[true; 5]), s(&[]));
    // NULL-free: a NULL stream key goes, unmatched keys stay.
    assert_eq!(naaj(&d, &[true, true, false, true, true]), s(&["3|c"]));
    // Empty: every row stays, the NULL key's too.
    assert_eq!(naaj(&d, &[false; 5]), s(&["1|a", "2|b", "NULL|n", "3|c", "2|b2"]));
}
