//! Constant expressions (IDL 4.2 §7.4.1.4.3): integers in 128 bits with every operation
//! checked, floats, and conversion to the declared type with its range checked.

use crate::ast::{ConstValue, Primitive, ScopedName, TypeSpec};
use crate::lexer::Punct;

/// A value while an expression is evaluated.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Integer(i128),
    Float(f64),
    Boolean(bool),
    Char(char),
    String(String),
    Enumerator {
        ty: ScopedName,
        name: String,
        value: i64,
    },
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a floating-point number",
            Value::Boolean(_) => "a boolean",
            Value::Char(_) => "a character",
            Value::String(_) => "a string",
            Value::Enumerator { .. } => "an enumerator",
        }
    }
}

pub(crate) fn from_const(c: &ConstValue) -> Value {
    match c {
        ConstValue::Integer(v) => Value::Integer(*v),
        ConstValue::Float(v) => Value::Float(*v),
        ConstValue::Boolean(v) => Value::Boolean(*v),
        ConstValue::Char(v) => Value::Char(*v),
        ConstValue::String(v) => Value::String(v.clone()),
        ConstValue::Enumerator { ty, name, value } => Value::Enumerator {
            ty: ty.clone(),
            name: name.clone(),
            value: *value,
        },
    }
}

pub(crate) fn to_const(v: Value) -> ConstValue {
    match v {
        Value::Integer(v) => ConstValue::Integer(v),
        Value::Float(v) => ConstValue::Float(v),
        Value::Boolean(v) => ConstValue::Boolean(v),
        Value::Char(v) => ConstValue::Char(v),
        Value::String(v) => ConstValue::String(v),
        Value::Enumerator { ty, name, value } => ConstValue::Enumerator { ty, name, value },
    }
}

fn overflow(op: Punct) -> String {
    format!("`{}` overflows", op.text())
}

pub(crate) fn binary(op: Punct, left: Value, right: Value) -> Result<Value, String> {
    match (left, right) {
        (Value::Integer(a), Value::Integer(b)) => {
            let r = match op {
                Punct::Plus => a.checked_add(b),
                Punct::Minus => a.checked_sub(b),
                Punct::Star => a.checked_mul(b),
                Punct::Slash | Punct::Percent if b == 0 => return Err("division by zero".into()),
                Punct::Slash => a.checked_div(b),
                Punct::Percent => a.checked_rem(b),
                Punct::Shl | Punct::Shr => {
                    // IDL requires 0 <= shift < 64.
                    if !(0..64).contains(&b) {
                        return Err(format!("shift by {b} (must be 0 to 63)"));
                    }
                    if op == Punct::Shl {
                        a.checked_mul(1i128 << b)
                    } else {
                        Some(a >> b)
                    }
                }
                Punct::Amp => Some(a & b),
                Punct::Pipe => Some(a | b),
                Punct::Caret => Some(a ^ b),
                _ => None,
            };
            r.map(Value::Integer).ok_or_else(|| overflow(op))
        }
        (Value::Float(a), Value::Float(b)) => float_op(op, a, b),
        (Value::Integer(a), Value::Float(b)) => float_op(op, a as f64, b),
        (Value::Float(a), Value::Integer(b)) => float_op(op, a, b as f64),
        (a, b) => Err(format!(
            "`{}` takes numbers, not {} and {}",
            op.text(),
            a.kind(),
            b.kind()
        )),
    }
}

fn float_op(op: Punct, a: f64, b: f64) -> Result<Value, String> {
    Ok(Value::Float(match op {
        Punct::Plus => a + b,
        Punct::Minus => a - b,
        Punct::Star => a * b,
        Punct::Slash => a / b,
        other => return Err(format!("`{}` takes integers", other.text())),
    }))
}

pub(crate) fn unary(op: Punct, v: Value) -> Result<Value, String> {
    match (op, v) {
        (Punct::Plus, v @ (Value::Integer(_) | Value::Float(_))) => Ok(v),
        (Punct::Minus, Value::Integer(a)) => a
            .checked_neg()
            .map(Value::Integer)
            .ok_or_else(|| overflow(op)),
        (Punct::Minus, Value::Float(a)) => Ok(Value::Float(-a)),
        (Punct::Tilde, Value::Integer(a)) => Ok(Value::Integer(!a)),
        (op, v) => Err(format!("`{}` cannot apply to {}", op.text(), v.kind())),
    }
}

/// `value` as a constant of type `ty`; `enum_name` when `ty` is an enum.
pub(crate) fn convert(
    value: Value,
    ty: &TypeSpec,
    enum_name: Option<&ScopedName>,
) -> Result<ConstValue, String> {
    if let Some(e) = enum_name {
        return match value {
            Value::Enumerator { ty, name, value } if &ty == e => {
                Ok(ConstValue::Enumerator { ty, name, value })
            }
            other => Err(format!(
                "expected an enumerator of `{e}`, found {}",
                other.kind()
            )),
        };
    }
    match ty {
        TypeSpec::Primitive(Primitive::Boolean) => match value {
            Value::Boolean(b) => Ok(ConstValue::Boolean(b)),
            other => Err(format!("expected TRUE or FALSE, found {}", other.kind())),
        },
        TypeSpec::Primitive(Primitive::Char | Primitive::WChar) => match value {
            Value::Char(c) => Ok(ConstValue::Char(c)),
            other => Err(format!("expected a character, found {}", other.kind())),
        },
        TypeSpec::Primitive(Primitive::Float | Primitive::Double) => match value {
            Value::Float(f) => Ok(ConstValue::Float(f)),
            Value::Integer(i) => Ok(ConstValue::Float(i as f64)),
            other => Err(format!("expected a number, found {}", other.kind())),
        },
        TypeSpec::Primitive(p) => {
            let Some((min, max)) = p.integer_range() else {
                return Err(format!("no constants of type {}", p.idl_name()));
            };
            match value {
                Value::Integer(mut i) => {
                    // `~0` for an unsigned type is its largest value, as in C.
                    if min == 0 && i < 0 && i >= -(max + 1) {
                        i += max + 1;
                    }
                    if i < min || i > max {
                        return Err(format!(
                            "{i} is out of the range of {} ({min} to {max})",
                            p.idl_name()
                        ));
                    }
                    Ok(ConstValue::Integer(i))
                }
                other => Err(format!(
                    "expected an integer for {}, found {}",
                    p.idl_name(),
                    other.kind()
                )),
            }
        }
        TypeSpec::String(bound) | TypeSpec::WString(bound) => match value {
            Value::String(s) => {
                if let Some(b) = bound {
                    if s.len() > *b as usize {
                        return Err(format!("the string is longer than its bound {b}"));
                    }
                }
                Ok(ConstValue::String(s))
            }
            other => Err(format!("expected a string, found {}", other.kind())),
        },
        TypeSpec::Sequence(..) | TypeSpec::Named(_) => {
            Err("a constant's type is a primitive, string or enum type".into())
        }
    }
}
