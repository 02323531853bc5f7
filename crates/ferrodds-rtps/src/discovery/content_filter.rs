//! `PID_CONTENT_FILTER_PROPERTY` (DDSI-RTPS 2.5 §9.6.2.2.4, `ContentFilterProperty_t`):
//! a content-filtered topic's reader announces its filter in SEDP, so that writers able to
//! evaluate it send the reader only what passes (writer-side filtering; see
//! [`crate::writer::ReaderFilter`]). Readers still apply their filter themselves: a writer
//! that does not understand the property, or a filter class it does not know, sends
//! everything.

use super::value::{ValueReader, ValueWriter};
use super::ValueError;
use crate::wire::Endianness;

/// The filter class of DDS's SQL subset (DDS 1.4 Annex B), the only one the spec names.
pub const DDSSQL: &str = "DDSSQL";

/// A reader's content filter as SEDP carries it: five CDR strings' worth of text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentFilterProperty {
    /// The content-filtered topic's name.
    pub content_filtered_topic_name: String,
    /// The topic it filters (the reader's topic).
    pub related_topic_name: String,
    /// How to read the expression: [`DDSSQL`] for DDS SQL.
    pub filter_class_name: String,
    /// The expression, `%n` standing for `expression_parameters[n]`.
    pub filter_expression: String,
    /// The parameters, as literals in text (`'RED'`, `5`).
    pub expression_parameters: Vec<String>,
}

impl ContentFilterProperty {
    /// A DDS SQL filter of `related_topic_name`.
    pub fn sql(
        content_filtered_topic_name: &str,
        related_topic_name: &str,
        expression: &str,
        parameters: &[String],
    ) -> Self {
        ContentFilterProperty {
            content_filtered_topic_name: content_filtered_topic_name.to_owned(),
            related_topic_name: related_topic_name.to_owned(),
            filter_class_name: DDSSQL.to_owned(),
            filter_expression: expression.to_owned(),
            expression_parameters: parameters.to_vec(),
        }
    }

    /// Whether the filter is DDS SQL with an expression (an empty class or expression
    /// means no filter, DDSI-RTPS 2.5 §9.6.2.2.4).
    pub fn is_sql(&self) -> bool {
        self.filter_class_name == DDSSQL && !self.filter_expression.is_empty()
    }

    pub(crate) fn read(r: &mut ValueReader<'_>) -> Result<Self, ValueError> {
        let content_filtered_topic_name = r.string()?;
        let related_topic_name = r.string()?;
        let filter_class_name = r.string()?;
        let filter_expression = r.string()?;
        // Each parameter takes at least its 4-byte length.
        let count = r.count(4)?;
        let mut expression_parameters = Vec::new();
        for _ in 0..count {
            expression_parameters.push(r.string()?);
        }
        Ok(ContentFilterProperty {
            content_filtered_topic_name,
            related_topic_name,
            filter_class_name,
            filter_expression,
            expression_parameters,
        })
    }

    pub(crate) fn to_value(&self, e: Endianness) -> Vec<u8> {
        let mut w = ValueWriter::new(e);
        w.string(&self.content_filtered_topic_name)
            .string(&self.related_topic_name)
            .string(&self.filter_class_name)
            .string(&self.filter_expression)
            .u32(u32::try_from(self.expression_parameters.len()).unwrap_or(u32::MAX));
        for p in &self.expression_parameters {
            w.string(p);
        }
        w.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::{
        DiscoveredReaderData, DiscoveredWriterData, DiscoveryError, EndpointData,
    };
    use crate::qos::EndpointQos;
    use crate::wire::parameter_list::pid;
    use crate::wire::{EntityId, Guid, GuidPrefix};

    fn reader(filter: Option<ContentFilterProperty>) -> DiscoveredReaderData {
        let guid = Guid::new(GuidPrefix([3; 12]), EntityId([0, 0, 1, 0x07]));
        let mut endpoint =
            EndpointData::new(guid, "Square", "ShapeType", EndpointQos::reader_default());
        endpoint.content_filter = filter;
        DiscoveredReaderData { endpoint }
    }

    #[test]
    fn a_readers_filter_goes_through_sedp_in_either_byte_order() {
        let filter = ContentFilterProperty::sql(
            "Square_filtered",
            "Square",
            "color = %0 AND x > %1",
            &["'RED'".to_owned(), "10".to_owned()],
        );
        for e in [Endianness::Little, Endianness::Big] {
            let sent = reader(Some(filter.clone()));
            let bytes = sent.to_vec(e).unwrap();
            assert_eq!(DiscoveredReaderData::parse(&bytes).unwrap(), sent);
        }
        assert!(filter.is_sql());
        assert!(!ContentFilterProperty {
            filter_expression: String::new(),
            ..filter
        }
        .is_sql());
    }

    /// A reader's announcement (little endian) with `value` as its content filter.
    fn with_value(value: &[u8]) -> Vec<u8> {
        let bytes = reader(None).to_vec(Endianness::Little).unwrap();
        with_parameter(bytes, value)
    }

    /// `announcement` with PID_CONTENT_FILTER_PROPERTY `value` before its sentinel.
    fn with_parameter(mut bytes: Vec<u8>, value: &[u8]) -> Vec<u8> {
        // Before the sentinel (the last 4 bytes).
        let sentinel = bytes.split_off(bytes.len() - 4);
        bytes.extend_from_slice(&pid::CONTENT_FILTER_PROPERTY.to_le_bytes());
        bytes.extend_from_slice(&(value.len() as u16).to_le_bytes());
        bytes.extend_from_slice(value);
        bytes.extend_from_slice(&sentinel);
        bytes
    }

    #[test]
    fn a_parameter_count_beyond_the_value_is_refused_before_anything_is_reserved() {
        let mut value = Vec::new();
        for s in ["a", "b", "DDSSQL", "x > 1"] {
            value.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
            value.extend_from_slice(s.as_bytes());
            value.push(0);
            value.resize(value.len().next_multiple_of(4), 0);
        }
        value.extend_from_slice(&u32::MAX.to_le_bytes());
        let err = DiscoveredReaderData::parse(&with_value(&value)).unwrap_err();
        assert!(
            matches!(
                err,
                DiscoveryError::InvalidParameter {
                    pid: pid::CONTENT_FILTER_PROPERTY,
                    ..
                }
            ),
            "{err:?}"
        );
        // Truncated inside a string.
        let truncated = DiscoveredReaderData::parse(&with_value(&value[..12])).unwrap_err();
        assert!(
            matches!(truncated, DiscoveryError::InvalidParameter { .. }),
            "{truncated:?}"
        );
    }

    #[test]
    fn a_writers_announcement_skips_the_parameter() {
        // Only readers have filters: in a writer's announcement it means nothing, and even
        // a malformed one is skipped.
        let guid = Guid::new(GuidPrefix([3; 12]), EntityId([0, 0, 1, 0x02]));
        let writer = DiscoveredWriterData {
            endpoint: EndpointData::new(guid, "Square", "ShapeType", EndpointQos::writer_default()),
        };
        let bytes = with_parameter(writer.to_vec(Endianness::Little).unwrap(), &[0xff; 4]);
        assert_eq!(DiscoveredWriterData::parse(&bytes).unwrap(), writer);
    }
}
