//! User-defined functions: scalar UDFs vectorized over Arrow arrays, and aggregate UDFs
//! ([`AggregateUdf`]) through an [`Accumulator`]. Registered with [`crate::Session::register_udf`] /
//! [`crate::Session::register_udaf`], they are called from SQL by name and from Rust with
//! [`crate::functions::call_udf`].
//!
//! A UDF is opaque to the optimizer, as a Scala UDF is to Catalyst: it is never folded, a
//! predicate on it is never pushed into a scan (it stays in the Filter, and in a scan's
//! DataFilters), and a `Volatile` one is not deterministic, so nothing moves it at all.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef};
use arrow::datatypes::{DataType, Field};

use crate::error::{KilnError, Result};

/// How a function's result depends on its arguments (DataFusion's `Volatility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Volatility {
    /// The same arguments always give the same result.
    Immutable,
    /// The same within one query (kiln treats it as `Immutable`).
    Stable,
    /// May differ at every call (a random number, a clock): never folded, never moved.
    Volatile,
}

/// The argument types a function accepts.
#[derive(Debug, Clone, PartialEq)]
pub enum Signature {
    /// Exactly these types; an argument of another numeric type is cast to its type, as
    /// Spark casts the inputs of a Scala UDF.
    Exact(Vec<DataType>),
    /// This many arguments of any type, given to the function as they are.
    Any(usize),
    /// One or more arguments, each cast to this type (a numeric argument to a numeric type).
    Variadic(DataType),
    /// One or more arguments of any types, given to the function as they are.
    VariadicAny,
    /// The first of these signatures the arguments fit (`OneOf([Exact([Int64]),
    /// Exact([Utf8, Int64])])`: one or two arguments).
    OneOf(Vec<Signature>),
}

impl Signature {
    /// The argument types after coercion, or an error naming the function.
    fn coerce(&self, name: &str, given: &[DataType]) -> Result<Vec<DataType>> {
        let wanted = match self {
            Signature::Any(n) => {
                if given.len() != *n {
                    return Err(arity(name, *n, given.len()));
                }
                return Ok(given.to_vec());
            }
            Signature::Exact(types) => types.clone(),
            Signature::Variadic(_) | Signature::VariadicAny if given.is_empty() => {
                return Err(KilnError::analysis(
                    "WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
                    format!("The `{name}` requires at least 1 parameters but the actual number is 0. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix."),
                ))
            }
            Signature::Variadic(t) => vec![t.clone(); given.len()],
            Signature::VariadicAny => return Ok(given.to_vec()),
            Signature::OneOf(choices) => {
                let mut first_error = None;
                for c in choices {
                    match c.coerce(name, given) {
                        Ok(types) => return Ok(types),
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                return Err(first_error.unwrap_or_else(|| arity(name, 0, given.len())));
            }
        };
        if given.len() != wanted.len() {
            return Err(arity(name, wanted.len(), given.len()));
        }
        for (i, (g, w)) in given.iter().zip(&wanted).enumerate() {
            let castable = g == w || *g == DataType::Null || (g.is_numeric() && w.is_numeric());
            if !castable {
                return Err(KilnError::analysis(
                    "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                    format!("Cannot resolve `{name}`: parameter {} requires the {w} type, however the argument has the type {g}.", i + 1),
                ));
            }
        }
        Ok(wanted)
    }
}

fn arity(name: &str, wanted: usize, given: usize) -> KilnError {
    KilnError::analysis("WRONG_NUM_ARGS.WITHOUT_SUGGESTION", format!("The `{name}` requires {wanted} parameters but the actual number is {given}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix."))
}

/// The body of a scalar UDF: the argument columns of a batch in, the result column out
/// (of the batch's length and the UDF's return type).
pub type ScalarFunction = Arc<dyn Fn(&[ArrayRef]) -> Result<ArrayRef> + Send + Sync>;

/// A UDF's result type from its argument types (after coercion to its signature); an `Err`
/// is the analysis error of a call with those types.
pub type ReturnTypeFunction = Arc<dyn Fn(&[DataType]) -> Result<DataType> + Send + Sync>;

/// A scalar UDF of fixed argument types (DataFusion's `create_udf`): arguments of other
/// numeric types are cast to `input_types`, as [`Signature::Exact`].
///
/// ```
/// use std::sync::Arc;
/// use kiln::arrow::array::{ArrayRef, AsArray, Float64Array};
/// use kiln::arrow::datatypes::{DataType, Float64Type};
/// use kiln::udf::{create_udf, Volatility};
///
/// let session = kiln::Session::new();
/// let hyp = create_udf("hyp", vec![DataType::Float64, DataType::Float64], DataType::Float64, Volatility::Immutable, |args: &[ArrayRef]| {
///     let (a, b) = (args[0].as_primitive::<Float64Type>(), args[1].as_primitive::<Float64Type>());
///     Ok(Arc::new(a.iter().zip(b.iter()).map(|(a, b)| Some(a?.hypot(b?))).collect::<Float64Array>()) as ArrayRef)
/// });
/// session.register_udf(hyp).unwrap();
/// let rows = session.sql("SELECT hyp(3, 4) AS h").unwrap().collect().unwrap();
/// assert_eq!(rows[0].column(0).as_primitive::<Float64Type>().value(0), 5.0);
/// ```
pub fn create_udf(
    name: &str,
    input_types: Vec<DataType>,
    return_type: DataType,
    volatility: Volatility,
    func: impl Fn(&[ArrayRef]) -> Result<ArrayRef> + Send + Sync + 'static,
) -> ScalarUdf {
    ScalarUdf::new(name, Signature::Exact(input_types), return_type, volatility, func)
}

/// A scalar user-defined function.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{ArrayRef, Int64Array, AsArray};
/// use arrow::datatypes::{DataType, Int64Type};
/// use kiln::udf::{ScalarUdf, Signature, Volatility};
///
/// let session = kiln::Session::new();
/// session.register_udf(ScalarUdf::new("twice", Signature::Exact(vec![DataType::Int64]), DataType::Int64, Volatility::Immutable, |args: &[ArrayRef]| {
///     let a = args[0].as_primitive::<Int64Type>();
///     Ok(Arc::new(a.iter().map(|v| v.map(|v| v * 2)).collect::<Int64Array>()) as ArrayRef)
/// })).unwrap();
/// let rows = session.sql("SELECT twice(21) AS x").unwrap().collect().unwrap();
/// assert_eq!(rows[0].column(0).as_primitive::<Int64Type>().value(0), 42);
/// ```
pub struct ScalarUdf {
    name: String,
    signature: Signature,
    return_type: DataType,
    volatility: Volatility,
    func: ScalarFunction,
    /// The result type per call, when it depends on the arguments' types.
    return_type_fn: Option<ReturnTypeFunction>,
}

impl ScalarUdf {
    /// A UDF called `name` (case-insensitive, as SQL function names are).
    pub fn new(
        name: impl Into<String>,
        signature: Signature,
        return_type: DataType,
        volatility: Volatility,
        func: impl Fn(&[ArrayRef]) -> Result<ArrayRef> + Send + Sync + 'static,
    ) -> ScalarUdf {
        ScalarUdf { name: name.into(), signature, return_type, volatility, func: Arc::new(func), return_type_fn: None }
    }
    /// A UDF whose result type depends on its arguments' types: `return_type` gives it for
    /// each call, from the types after coercion to `signature` (as DataFusion's
    /// `return_type_from_args`). `Signature::OneOf` with this makes an overloaded function.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use kiln::arrow::array::ArrayRef;
    /// use kiln::arrow::datatypes::DataType;
    /// use kiln::udf::{ScalarUdf, Signature, Volatility};
    ///
    /// // first_arg(x, ...): its first argument, of that argument's type.
    /// let first_arg = ScalarUdf::with_return_type(
    ///     "first_arg",
    ///     Signature::VariadicAny,
    ///     |types: &[DataType]| Ok(types[0].clone()),
    ///     Volatility::Immutable,
    ///     |args: &[ArrayRef]| Ok(args[0].clone()),
    /// );
    /// let session = kiln::Session::new();
    /// session.register_udf(first_arg).unwrap();
    /// let df = session.sql("SELECT first_arg('a', 1) AS s, first_arg(2.5D) AS d").unwrap();
    /// assert_eq!(df.schema().field(0).data_type(), &DataType::Utf8);
    /// assert_eq!(df.schema().field(1).data_type(), &DataType::Float64);
    /// ```
    pub fn with_return_type(
        name: impl Into<String>,
        signature: Signature,
        return_type: impl Fn(&[DataType]) -> Result<DataType> + Send + Sync + 'static,
        volatility: Volatility,
        func: impl Fn(&[ArrayRef]) -> Result<ArrayRef> + Send + Sync + 'static,
    ) -> ScalarUdf {
        ScalarUdf { name: name.into(), signature, return_type: DataType::Null, volatility, func: Arc::new(func), return_type_fn: Some(Arc::new(return_type)) }
    }
    /// This UDF for a call with arguments of `types` (after coercion): itself, or, when its
    /// result type depends on them, a copy declaring the call's result type.
    pub(crate) fn for_call(self: &Arc<Self>, types: &[DataType]) -> Result<Arc<ScalarUdf>> {
        let Some(f) = &self.return_type_fn else { return Ok(self.clone()) };
        let return_type = catch_user_panic(|| f(types))
            .map_err(|p| self.failed(format!("its return type function panicked: {}", panic_message(&p))))??;
        Ok(Arc::new(ScalarUdf {
            name: self.name.clone(),
            signature: self.signature.clone(),
            return_type,
            volatility: self.volatility,
            func: self.func.clone(),
            return_type_fn: None,
        }))
    }
    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The argument types it accepts.
    pub fn signature(&self) -> &Signature {
        &self.signature
    }
    /// The type of its result (`Null` for one made [`ScalarUdf::with_return_type`], whose
    /// calls each have their own).
    pub fn return_type(&self) -> &DataType {
        &self.return_type
    }
    /// Whether the same arguments give the same result.
    pub fn volatility(&self) -> Volatility {
        self.volatility
    }
    /// The argument types after coercion of `given`, or an analysis error naming the function.
    pub(crate) fn coerce(&self, given: &[DataType]) -> Result<Vec<DataType>> {
        self.signature.coerce(&self.name, given)
    }
    /// Calls the function over one batch's argument columns (`rows` long). A panic is caught
    /// and becomes an error naming the function; so does a result of the wrong length or type.
    pub fn invoke(&self, args: &[ArrayRef], rows: usize) -> Result<ArrayRef> {
        let out = catch_user_panic(|| (self.func)(args))
            .map_err(|p| self.failed(format!("it panicked: {}", panic_message(&p))))?
            .map_err(|e| self.failed(e.to_string()))?;
        if out.len() != rows {
            return Err(self.failed(format!("it returned {} values for {rows} rows", out.len())));
        }
        if out.data_type() != &self.return_type {
            return Err(self.failed(format!("it returned an array of type {} but is declared to return {}", out.data_type(), self.return_type)));
        }
        Ok(out)
    }
    fn failed(&self, why: String) -> KilnError {
        KilnError::exec(format!("[FAILED_EXECUTE_UDF] User defined function `{}` failed: {why}", self.name))
    }
}

thread_local! {
    /// Whether this thread runs a user function under [`catch_user_panic`] now.
    static IN_USER_FUNCTION: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs a user function, a panic in it caught (it becomes the call's error) and not printed
/// by the panic hook: kiln's hook, installed once before the first call, passes every other
/// panic to the hook that was there.
pub(crate) fn catch_user_panic<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    static QUIET_HOOK: std::sync::Once = std::sync::Once::new();
    QUIET_HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_USER_FUNCTION.with(|c| c.get()) {
                previous(info)
            }
        }));
    });
    let outer = IN_USER_FUNCTION.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_USER_FUNCTION.with(|c| c.set(outer));
    result
}

/// The text of a caught panic's payload.
pub(crate) fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_else(|| "(no message)".into())
}

impl fmt::Debug for ScalarUdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ScalarUdf({}: {:?} -> {}, {:?})", self.name, self.signature, self.return_type, self.volatility)
    }
}

impl PartialEq for ScalarUdf {
    /// One name is one function in a session (registering again replaces it).
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other) || (self.name == other.name && self.return_type == other.return_type && self.signature == other.signature)
    }
}

/// The per-group state of an aggregate, built-in or user-defined. Groups are numbered densely
/// from 0; a partial aggregate calls `update` then `state`, a final one `merge` (with the
/// columns `state` produced, from many partitions) then `evaluate`.
pub trait Accumulator {
    /// Makes room for `groups` groups (new ones empty).
    fn resize(&mut self, groups: usize);
    /// Adds input rows: `args` are the evaluated arguments, `gids[i]` the group of row i.
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()>;
    /// Merges partial states (columns as `state` produces them): row i into group `gids[i]`.
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()>;
    /// The state columns (the partial aggregate's buffer), one row per group.
    fn state(&mut self) -> Result<Vec<ArrayRef>>;
    /// The final value per group.
    fn evaluate(&mut self) -> Result<ArrayRef>;
    /// The final value of each row of `state`, each row one group's whole buffer (columns as
    /// `state` produces them, no two rows the same group): what merging each row into a group
    /// of its own, then evaluating, gives. The built-ins read the buffer as it is.
    fn evaluate_state(&mut self, state: &[ArrayRef]) -> Result<ArrayRef> {
        evaluate_by_merging(self, state)
    }
}

/// [`Accumulator::evaluate_state`] by merging each row of `state` into a group of its own.
pub fn evaluate_by_merging<A: Accumulator + ?Sized>(acc: &mut A, state: &[ArrayRef]) -> Result<ArrayRef> {
    let rows = state.first().map_or(0, |a| a.len());
    acc.resize(rows);
    acc.merge(&(0..rows as u32).collect::<Vec<_>>(), state)?;
    acc.evaluate()
}

/// Makes a fresh accumulator, one per aggregate and partition.
pub type AccumulatorFactory = Arc<dyn Fn() -> Box<dyn Accumulator> + Send + Sync>;

/// A user-defined aggregate function, usable with GROUP BY and split, as the built-ins are,
/// into a partial aggregate before the shuffle and a final one after it.
///
/// A registered aggregate lives as long as the process (as Spark's function registry lives as
/// long as its JVM), so plans can refer to it as they refer to `sum`.
pub struct AggregateUdf {
    name: String,
    signature: Signature,
    return_type: DataType,
    state: Vec<Field>,
    factory: AccumulatorFactory,
}

impl AggregateUdf {
    /// An aggregate called `name`, whose partial state is the columns `state` and whose
    /// accumulators `factory` makes.
    pub fn new(
        name: impl Into<String>,
        signature: Signature,
        return_type: DataType,
        state: Vec<Field>,
        factory: impl Fn() -> Box<dyn Accumulator> + Send + Sync + 'static,
    ) -> AggregateUdf {
        AggregateUdf { name: name.into(), signature, return_type, state, factory: Arc::new(factory) }
    }
    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The type of its result.
    pub fn return_type(&self) -> &DataType {
        &self.return_type
    }
    /// The columns of its partial state.
    pub fn state_fields(&self) -> &[Field] {
        &self.state
    }
    /// The argument types after coercion of `given`, or an analysis error naming the function.
    pub(crate) fn coerce(&self, given: &[DataType]) -> Result<Vec<DataType>> {
        self.signature.coerce(&self.name, given)
    }
    /// A fresh accumulator whose panics and malformed results are errors naming the function.
    pub(crate) fn accumulator(&'static self) -> Box<dyn Accumulator> {
        Box::new(Guarded { udaf: self, inner: (self.factory)(), groups: 0 })
    }
    fn failed(&self, why: String) -> KilnError {
        KilnError::exec(format!("[FAILED_EXECUTE_UDF] User defined aggregate function `{}` failed: {why}", self.name))
    }
}

impl fmt::Debug for AggregateUdf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AggregateUdf({}: {:?} -> {})", self.name, self.signature, self.return_type)
    }
}

/// A user's accumulator behind `catch_unwind`, its outputs checked against the declaration.
struct Guarded {
    udaf: &'static AggregateUdf,
    inner: Box<dyn Accumulator>,
    groups: usize,
}

impl Guarded {
    fn call<T>(&mut self, f: impl FnOnce(&mut dyn Accumulator) -> Result<T>) -> Result<T> {
        let inner = &mut self.inner;
        catch_user_panic(|| f(inner.as_mut()))
            .map_err(|p| self.udaf.failed(format!("it panicked: {}", panic_message(&p))))?
            .map_err(|e| self.udaf.failed(e.to_string()))
    }
    fn check(&self, what: &str, a: &ArrayRef, t: &DataType) -> Result<()> {
        if a.len() != self.groups {
            return Err(self.udaf.failed(format!("its {what} has {} rows for {} groups", a.len(), self.groups)));
        }
        if a.data_type() != t {
            return Err(self.udaf.failed(format!("its {what} is of type {} but is declared {t}", a.data_type())));
        }
        Ok(())
    }
}

impl Accumulator for Guarded {
    fn resize(&mut self, groups: usize) {
        self.groups = self.groups.max(groups);
        // A panic here is caught and surfaces at the next call, which sees a poisoned state.
        let _ = self.call(|a| {
            a.resize(groups);
            Ok(())
        });
    }
    fn update(&mut self, gids: &[u32], args: &[ArrayRef]) -> Result<()> {
        self.call(|a| a.update(gids, args))
    }
    fn merge(&mut self, gids: &[u32], state: &[ArrayRef]) -> Result<()> {
        self.call(|a| a.merge(gids, state))
    }
    fn state(&mut self) -> Result<Vec<ArrayRef>> {
        let out = self.call(|a| a.state())?;
        if out.len() != self.udaf.state.len() {
            return Err(self.udaf.failed(format!("its state has {} columns, declared {}", out.len(), self.udaf.state.len())));
        }
        for (a, f) in out.iter().zip(&self.udaf.state) {
            self.check("state", a, f.data_type())?;
        }
        Ok(out)
    }
    fn evaluate(&mut self) -> Result<ArrayRef> {
        let out = self.call(|a| a.evaluate())?;
        self.check("result", &out, &self.udaf.return_type)?;
        Ok(out)
    }
}
