//! The suite's data type and the lines the suite reads.

use ferrodds::Cdr;

/// The suite's type (`srcCxx/shape.idl`):
///
/// ```idl
/// @appendable struct ShapeType {
///   @key string<128> color; int32 x; int32 y; int32 shapesize;
///   sequence<uint8> additional_payload_size;
/// };
/// ```
#[derive(Cdr, Debug, Clone, PartialEq, Default)]
#[cdr(appendable, type_name = "ShapeType")]
pub(crate) struct ShapeType {
    #[cdr(key, bound = 128)]
    pub(crate) color: String,
    pub(crate) x: i32,
    pub(crate) y: i32,
    pub(crate) shapesize: i32,
    pub(crate) additional_payload_size: Vec<u8>,
}

/// The registered type name.
pub(crate) const TYPE_NAME: &str = "ShapeType";

/// C's `%-10s`: left-aligned in at least 10 bytes.
fn pad10(s: &str) -> String {
    let mut out = s.to_string();
    out.extend(std::iter::repeat_n(' ', 10usize.saturating_sub(s.len())));
    out
}

/// A sample as the suite prints it: C's `"%-10s %-10s %03d %03d [%d]"`, then ` {N}` with the
/// last byte of `additional_payload_size` when there is one.
pub(crate) fn sample_line(topic: &str, shape: &ShapeType) -> String {
    let mut line = format!(
        "{} {} {:03} {:03} [{}]",
        pad10(topic),
        pad10(&shape.color),
        shape.x,
        shape.y,
        shape.shapesize
    );
    if let Some(last) = shape.additional_payload_size.last() {
        line.push_str(&format!(" {{{last}}}"));
    }
    line
}

/// An instance that is no longer alive: `"%-10s %-10s NOT_ALIVE_..._INSTANCE_STATE"`.
pub(crate) fn instance_state_line(topic: &str, color: &str, state: &str) -> String {
    format!("{} {} {state}", pad10(topic), pad10(color))
}

/// The name the suite's vendors print for a QoS policy id (`get_qos_policy_name`).
pub(crate) fn policy_name(id: u32) -> &'static str {
    match id {
        1 => "USERDATA",
        2 => "DURABILITY",
        3 => "PRESENTATION",
        4 => "DEADLINE",
        5 => "LATENCYBUDGET",
        6 => "OWNERSHIP",
        7 => "OWNERSHIPSTRENGTH",
        8 => "LIVELINESS",
        9 => "TIMEBASEDFILTER",
        10 => "PARTITION",
        11 => "RELIABILITY",
        12 => "DESTINATIONORDER",
        13 => "HISTORY",
        14 => "RESOURCELIMITS",
        15 => "ENTITYFACTORY",
        16 => "WRITERDATALIFECYCLE",
        17 => "READERDATALIFECYCLE",
        18 => "TOPICDATA",
        19 => "GROUPDATA",
        20 => "TRANSPORTPRIORITY",
        21 => "LIFESPAN",
        22 => "DURABILITYSERVICE",
        23 => "DATAREPRESENTATION",
        24 => "TYPE_CONSISTENCY_ENFORCEMENT",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_as_c_prints_them() {
        let mut s = ShapeType {
            color: "BLUE".into(),
            x: 7,
            y: 123,
            shapesize: 20,
            additional_payload_size: Vec::new(),
        };
        assert_eq!(
            sample_line("Square", &s),
            "Square     BLUE       007 123 [20]"
        );
        s.additional_payload_size = vec![255; 3];
        s.x = -4;
        assert_eq!(
            sample_line("Square", &s),
            "Square     BLUE       -04 123 [20] {255}"
        );
        assert_eq!(
            sample_line("Square_filtered", &s),
            "Square_filtered BLUE       -04 123 [20] {255}"
        );
        assert_eq!(
            instance_state_line("Circle", "RED", "NOT_ALIVE_DISPOSED_INSTANCE_STATE"),
            "Circle     RED        NOT_ALIVE_DISPOSED_INSTANCE_STATE"
        );
    }
}
