//! Configuration files on disk, good and bad, and the errors they give.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use ferrodds_transport::{
    ConfigError, ConfigOrigin, InterfaceSelector, ParticipantIndex, Peer, TransportConfig,
};

/// Writes `text` to a file of this test process and returns its path.
fn file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "ferrodds-transport-{}-{name}.toml",
        std::process::id()
    ));
    std::fs::write(&path, text).expect("the test file is written");
    path
}

#[test]
fn documented_example_parses() {
    // The example of docs/configuration.md, kept in step with it.
    let docs = include_str!("../../../docs/configuration.md");
    let start = docs.find("```toml\n").expect("docs have a TOML example") + "```toml\n".len();
    let end = start + docs[start..].find("```").unwrap();
    let path = file("docs-example", &docs[start..end]);
    let config = TransportConfig::from_file(&path).unwrap();
    assert_eq!(config.domain_id(), 5);
    assert_eq!(config.participant_index(), ParticipantIndex::Auto);
    assert_eq!(config.max_participant_index(), 30);
    assert_eq!(config.interface(), &InterfaceSelector::Name("eth0".into()));
    assert!(config.allow_multicast());
    assert_eq!(config.multicast_group(), Ipv4Addr::new(239, 255, 0, 1));
    assert_eq!(config.multicast_ttl(), 1);
    assert_eq!(
        config.peers(),
        [
            Peer::new(Ipv4Addr::new(192, 168, 1, 20), None),
            "robot-2.local:7410".parse().unwrap(),
        ]
    );
    assert_eq!(config.participants_per_peer(), 10);
    assert_eq!(config.receive_buffer_size(), 8 << 20);
    assert_eq!(config.send_buffer_size(), 1 << 20);
    std::fs::remove_file(path).unwrap();
}

#[test]
fn good_file() {
    let path = file(
        "good",
        "# loopback only, fixed index, peers instead of multicast\n\
         [domain]\n\
         id = 120\n\
         participant_index = 2\n\
         \n\
         [transport]\n\
         interface = \"127.0.0.1\"\n\
         allow_multicast = false\n\
         peers = [\"127.0.0.1:7410\", \"localhost\"]\n\
         receive_buffer_size = 2097152\n",
    );
    let config = TransportConfig::from_file(&path).unwrap();
    assert_eq!(config.domain_id(), 120);
    assert_eq!(config.participant_index(), ParticipantIndex::Fixed(2));
    assert_eq!(
        config.interface(),
        &InterfaceSelector::Address(Ipv4Addr::LOCALHOST)
    );
    assert!(!config.allow_multicast());
    assert_eq!(config.peers().len(), 2);
    assert_eq!(config.receive_buffer_size(), 2 << 20);
    assert_eq!(config.send_buffer_size(), 1 << 20, "default kept");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn bad_files_name_the_file_the_key_and_the_problem() {
    let cases = [
        (
            "bad-domain",
            "[domain]\nid = 233\n",
            "line 2: key `domain.id`: domain id 233 is out of range: with port base 7400 the \
             largest domain id whose ports fit in 16 bits is 232",
        ),
        (
            "bad-key",
            "[domain]\nid = 1\n\n[transport]\nbuffer = 3\n",
            "line 5: key `transport.buffer`: unknown field `buffer`, expected one of \
             `interface`, `allow_multicast`, `multicast_group`, `multicast_ttl`, `peers`, \
             `participants_per_peer`, `receive_buffer_size`, `send_buffer_size`, \
             `busy_poll`, `wait_spin_us`, `in_process`, `shared_memory`, `receive_spin_us`",
        ),
        (
            "bad-type",
            "[transport]\nmulticast_ttl = \"one\"\n",
            "line 2: key `transport.multicast_ttl`: invalid type: string \"one\", expected u32",
        ),
        (
            "bad-peer",
            "[transport]\npeers = [\"10.0.0.1:7410\", \"10.0.0.2:\"]\n",
            "line 2: key `transport.peers[1]`: the port in `10.0.0.2:` must be a number from \
             1 to 65535; found ``",
        ),
        (
            "bad-syntax",
            "[domain\nid = 1\n",
            "line 1, column 8: not valid TOML: unclosed table, expected `]`",
        ),
    ];
    for (name, text, expected) in cases {
        let path = file(name, text);
        let err = TransportConfig::from_file(&path).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("configuration file `{}`, {expected}", path.display()),
            "{name}"
        );
        match err {
            ConfigError::Invalid { origin, .. } | ConfigError::Syntax { origin, .. } => {
                assert_eq!(origin, ConfigOrigin::File(path.clone()));
            }
            other => panic!("{name}: {other:?}"),
        }
        std::fs::remove_file(path).unwrap();
    }
}
