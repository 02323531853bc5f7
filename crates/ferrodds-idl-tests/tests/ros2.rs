//! The ROS 2 messages written as IDL (Time, Header, Image, PointField, PointCloud2,
//! JointState; included between files as rosidl writes them), generated into one module tree
//! (`idl_types.rs`) and, separately, with ROS 2's wire names: they compile, encode as ROS 2's
//! DDS layers do (final structs, XCDR1 by default), and round-trip.

#![allow(clippy::unwrap_used)]

use ferrodds_cdr::{deserialize, serialize, Cdr, Endianness, XcdrVersion};

mod idl_names {
    include!(concat!(env!("OUT_DIR"), "/ros2/idl_types.rs"));
}

mod wire_names {
    include!(concat!(env!("OUT_DIR"), "/ros2_wire/idl_types.rs"));
}

/// One file's output alone, as a build.rs that compiles a single message would include it.
mod time_alone {
    include!(concat!(env!("OUT_DIR"), "/ros2/Time.rs"));
}

use idl_names::builtin_interfaces::msg::Time;
use idl_names::sensor_msgs::msg::{
    Image, JointState, PointCloud2, PointField, PointField_Constants,
};
use idl_names::std_msgs::msg::Header;

fn header() -> Header {
    Header {
        stamp: Time {
            sec: -5,
            nanosec: 999_999_999,
        },
        frame_id: "base_link".into(),
    }
}

fn round_trip<T: Cdr + PartialEq + std::fmt::Debug>(sample: &T) {
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        for endianness in [Endianness::Little, Endianness::Big] {
            let bytes = serialize(sample, version, endianness).unwrap();
            assert_eq!(
                &deserialize::<T>(&bytes).unwrap(),
                sample,
                "{version:?} {endianness:?}"
            );
        }
    }
}

#[test]
fn header_encodes_as_ros2_does() {
    // CDR little endian: sec, nanosec, then the string (length with its NUL), padded to 4.
    let bytes = serialize(&header(), XcdrVersion::Xcdr1, Endianness::Little).unwrap();
    assert_eq!(
        hex::encode(bytes),
        "00010002fbffffffffc99a3b0a000000626173655f6c696e6b000000"
    );
    assert_eq!(Header::TYPE_NAME, "std_msgs::msg::Header");
    const { assert!(!Header::IS_KEYED) };
}

#[test]
fn every_message_round_trips() {
    round_trip(&header());
    round_trip(&Image {
        header: header(),
        height: 2,
        width: 3,
        encoding: "rgb8".into(),
        is_bigendian: 0,
        step: 9,
        data: (0..18).collect(),
    });
    round_trip(&PointCloud2 {
        header: header(),
        height: 1,
        width: 2,
        fields: ["x", "y", "z"]
            .iter()
            .enumerate()
            .map(|(i, n)| PointField {
                name: (*n).into(),
                offset: 4 * i as u32,
                datatype: PointField_Constants::FLOAT32,
                count: 1,
            })
            .collect(),
        is_bigendian: false,
        point_step: 12,
        row_step: 24,
        data: vec![0; 24],
        is_dense: true,
    });
    round_trip(&JointState {
        header: header(),
        name: vec!["shoulder".into(), "elbow".into()],
        position: vec![0.5, -1.0],
        velocity: vec![],
        effort: vec![2.0, 3.0],
    });
    assert_eq!(PointField_Constants::FLOAT64, 8);
}

#[test]
fn wire_names_are_ros2s() {
    use wire_names::sensor_msgs::msg::Image as WireImage;
    use wire_names::std_msgs::msg::Header as WireHeader;
    assert_eq!(WireHeader::TYPE_NAME, "std_msgs::msg::dds_::Header_");
    assert_eq!(WireImage::TYPE_NAME, "sensor_msgs::msg::dds_::Image_");
    // Same layout either way: only the registered names differ.
    let wire = WireHeader {
        stamp: wire_names::builtin_interfaces::msg::Time {
            sec: -5,
            nanosec: 999_999_999,
        },
        frame_id: "base_link".into(),
    };
    assert_eq!(
        serialize(&wire, XcdrVersion::Xcdr1, Endianness::Little).unwrap(),
        serialize(&header(), XcdrVersion::Xcdr1, Endianness::Little).unwrap()
    );
}

#[test]
fn one_files_output_stands_alone() {
    let t = time_alone::builtin_interfaces::msg::Time { sec: 1, nanosec: 2 };
    assert_eq!(
        time_alone::builtin_interfaces::msg::Time::dynamic_type(),
        Time::dynamic_type()
    );
    round_trip(&t);
}
