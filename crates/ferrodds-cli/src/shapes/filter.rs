//! Content filters of the shape application: `-c RED` (the color equals RED) and `--cft
//! "<expression>"`, a filter expression of DDS 1.4 Annex B over ShapeType's members
//! (`color`, `x`, `y`, `shapesize`), as FerroDDS's content-filtered topics take them
//! ([`ferrodds::FilterExpression`]).
//!
//! The reader announces the filter, so that writers able to evaluate it (FerroDDS's, RTI
//! Connext's) send only what passes, and applies it to every sample that arrives (see
//! `Subscriber::create_reader_with_expression`); this module only checks the text.

use std::sync::Arc;

#[cfg(test)]
use ferrodds::dynamic::DynamicValue;
use ferrodds::{FilterError, FilterExpression};
use ferrodds_cdr::Cdr;

use super::shape::ShapeType;

/// A parsed filter, cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Filter(Arc<FilterExpression>);

impl Filter {
    /// Parses a filter expression.
    pub(crate) fn parse(text: &str) -> Result<Filter, FilterError> {
        FilterExpression::new(&ShapeType::dynamic_type(), text, &[]).map(|f| Filter(Arc::new(f)))
    }

    /// `color = '<color>'`.
    pub(crate) fn color(color: &str) -> Filter {
        let literal = format!("'{}'", color.replace('\'', "''"));
        match FilterExpression::new(&ShapeType::dynamic_type(), "color = %0", &[&literal]) {
            Ok(f) => Filter(Arc::new(f)),
            // ShapeType has a string member `color`, and any text is a string literal.
            Err(e) => unreachable!("color = %0 over ShapeType: {e}"),
        }
    }

    /// The expression, for the reader to announce.
    pub(crate) fn expression(&self) -> &str {
        self.0.text()
    }

    /// What its `%n` stand for.
    pub(crate) fn parameters(&self) -> Vec<&str> {
        self.0.parameters().iter().map(String::as_str).collect()
    }

    /// True if `s` passes.
    #[cfg(test)]
    pub(crate) fn matches(&self, s: &ShapeType) -> bool {
        // The members in ShapeType's order, as its runtime type has them.
        self.0.matches(&DynamicValue::Struct(vec![
            Some(DynamicValue::String(s.color.clone())),
            Some(DynamicValue::Int(i64::from(s.x))),
            Some(DynamicValue::Int(i64::from(s.y))),
            Some(DynamicValue::Int(i64::from(s.shapesize))),
            Some(DynamicValue::Bytes(Default::default())),
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(color: &str, x: i32, y: i32, size: i32) -> ShapeType {
        ShapeType {
            color: color.into(),
            x,
            y,
            shapesize: size,
            additional_payload_size: Vec::new(),
        }
    }

    fn passes(expr: &str, s: &ShapeType) -> bool {
        Filter::parse(expr)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .matches(s)
    }

    #[test]
    fn the_suites_expressions() {
        assert!(passes("shapesize <= 20", &shape("BLUE", 0, 0, 20)));
        assert!(!passes("shapesize <= 20", &shape("BLUE", 0, 0, 21)));
        assert!(Filter::color("RED").matches(&shape("RED", 1, 2, 3)));
        assert!(!Filter::color("RED").matches(&shape("BLUE", 1, 2, 3)));
    }

    #[test]
    fn grammar() {
        let s = shape("GREEN", 100, 50, 30);
        assert!(passes("color = 'GREEN' AND x > 50", &s));
        assert!(passes("color <> 'RED' and (x < 10 or y >= 50)", &s));
        assert!(passes("NOT color = 'RED'", &s));
        assert!(passes("x BETWEEN 100 AND 200", &s));
        assert!(!passes("x NOT BETWEEN 100 AND 200", &s));
        assert!(passes("color LIKE 'GR%'", &s));
        assert!(passes("color like 'GR_EN'", &s));
        assert!(!passes("color LIKE 'GR_'", &s));
        assert!(passes("50 = y", &s));
        assert!(passes("shapesize != -1", &s));
        assert!(passes("color = 'it''s' OR x = 100", &s));
        assert!(!passes("color = 'it''s'", &s));
    }

    #[test]
    fn refused() {
        for bad in [
            "",
            "shapesize <=",
            "colour = 'RED'",
            "color = 3",
            "x LIKE 'a'",
            "color = %0",
            "(x = 1",
            "x = 1 y = 2",
            "color = 'RED",
        ] {
            assert!(Filter::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
