//! `ferrodds why TOPIC` names the cause when a writer and a reader do not exchange data: a
//! test per cause. Each test makes the writer and the reader in two participants of this
//! process, checks that they really do not match (the reader's statuses), then runs the
//! `ferrodds` binary, a third participant, and checks what it prints. Domains 126–139.
//!
//! Needs multicast on `lo` for SPDP (root turns it on here).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use ferrodds::qos::{DataRepresentationId, Durability, EndpointQos, QosPolicyId};
use ferrodds::{Cdr, DomainParticipant, Qos};

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "why::Reading")]
struct Reading {
    #[cdr(key)]
    id: i32,
    value: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "why::Other")]
struct Other {
    #[cdr(key)]
    id: i32,
    value: f64,
}

#[derive(Cdr, Debug, Clone, PartialEq)]
#[cdr(appendable, type_name = "why::ReadingText")]
struct ReadingText {
    #[cdr(key)]
    id: i32,
    value: String,
}

fn participant(domain: u32, type_information: bool) -> DomainParticipant {
    let _ = Command::new("ip")
        .args(["link", "set", "lo", "multicast", "on"])
        .status();
    DomainParticipant::builder()
        .unwrap()
        .domain_id(domain)
        .interface("lo")
        .unwrap()
        .type_information(type_information)
        .build()
        .unwrap()
}

/// What `ferrodds why TOPIC` prints on `domain`.
fn why(domain: u32, topic: &str, listen: &str) -> String {
    let out = Command::new("timeout")
        .arg("40")
        .arg(env!("CARGO_BIN_EXE_ferrodds"))
        .args(["why", topic, "-d", &domain.to_string(), "--interface", "lo"])
        .args(["--duration", listen])
        .env_remove("FERRODDS_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run ferrodds why");
    assert!(
        out.status.success(),
        "ferrodds why failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A writer with `writer` QoS and a reader with `reader` QoS on topic "readings" of
/// `domain`, in two participants; asserts that they do not match, and returns what `why`
/// says. `incompatible` is the policy the reader's requested-incompatible-QoS status must
/// name (none for causes that are not RxO policies).
fn mismatch(
    domain: u32,
    writer: impl FnOnce(&mut EndpointQos),
    reader: impl FnOnce(&mut EndpointQos),
    incompatible: Option<QosPolicyId>,
) -> String {
    let a = participant(domain, true);
    let b = participant(domain, true);
    let mut wq = Qos::writer().reliable();
    writer(wq.policies_mut());
    let mut rq = Qos::reader().reliable();
    reader(rq.policies_mut());
    let wt = a.create_topic::<Reading>("readings").unwrap();
    let rt = b.create_topic::<Reading>("readings").unwrap();
    let w = a.create_writer(&wt, wq).unwrap();
    let r = b.create_reader(&rt, rq).unwrap();
    let said = why(domain, "readings", "2");
    assert_eq!(r.subscription_matched_status().current_count, 0, "{said}");
    assert!(w.matched_subscriptions().is_empty(), "{said}");
    if let Some(policy) = incompatible {
        let status = r.requested_incompatible_qos();
        assert!(
            status.total_count > 0,
            "the reader saw no incompatibility: {said}"
        );
        assert_eq!(status.last_policy, Some(policy), "{said}");
    }
    assert!(said.contains("they do not match"), "{said}");
    assert!(said.contains("0 of 1 writer/reader pairs match"), "{said}");
    said
}

fn assert_says(said: &str, lines: &[&str]) {
    for l in lines {
        assert!(said.contains(l), "no {l:?} in:\n{said}");
    }
}

#[test]
fn reliability() {
    let said = mismatch(
        126,
        |w| w.reliability.kind = ferrodds::qos::ReliabilityKind::BestEffort,
        |_| {},
        Some(QosPolicyId::Reliability),
    );
    assert_says(
        &said,
        &[
            "RELIABILITY: writer offers BEST_EFFORT, reader requests RELIABLE",
            "fix: set the writer's RELIABILITY to RELIABLE (or stronger), or the reader's to BEST_EFFORT (or weaker)",
        ],
    );
}

#[test]
fn durability() {
    let said = mismatch(
        127,
        |_| {},
        |r| r.durability = Durability::TransientLocal,
        Some(QosPolicyId::Durability),
    );
    assert_says(
        &said,
        &["DURABILITY: writer offers VOLATILE, reader requests TRANSIENT_LOCAL"],
    );
}

#[test]
fn deadline() {
    let said = mismatch(
        128,
        |w| w.deadline.period = Duration::from_secs(2).into(),
        |r| r.deadline.period = Duration::from_secs(1).into(),
        Some(QosPolicyId::Deadline),
    );
    assert_says(
        &said,
        &["DEADLINE: writer offers period 2s, reader requests period 1s"],
    );
}

#[test]
fn latency_budget() {
    let said = mismatch(
        129,
        |w| w.latency_budget.duration = Duration::from_millis(500).into(),
        |r| r.latency_budget.duration = Duration::from_millis(100).into(),
        Some(QosPolicyId::LatencyBudget),
    );
    assert_says(
        &said,
        &["LATENCY_BUDGET: writer offers 500ms, reader requests 100ms"],
    );
}

#[test]
fn ownership() {
    let said = mismatch(
        130,
        |_| {},
        |r| r.ownership = ferrodds::qos::Ownership::Exclusive,
        Some(QosPolicyId::Ownership),
    );
    assert_says(
        &said,
        &["OWNERSHIP: writer offers SHARED, reader requests EXCLUSIVE"],
    );
}

#[test]
fn liveliness() {
    let said = mismatch(
        131,
        |w| w.liveliness.lease_duration = Duration::from_secs(10).into(),
        |r| r.liveliness.lease_duration = Duration::from_secs(5).into(),
        Some(QosPolicyId::Liveliness),
    );
    assert_says(
        &said,
        &["LIVELINESS: writer offers AUTOMATIC, lease 10s, reader requests AUTOMATIC, lease 5s"],
    );
}

#[test]
fn destination_order() {
    let said = mismatch(
        132,
        |_| {},
        |r| r.destination_order = ferrodds::qos::DestinationOrder::BySourceTimestamp,
        Some(QosPolicyId::DestinationOrder),
    );
    assert_says(
        &said,
        &["DESTINATION_ORDER: writer offers ByReceptionTimestamp, reader requests BySourceTimestamp"],
    );
}

#[test]
fn presentation() {
    let said = mismatch(
        133,
        |_| {},
        |r| {
            r.presentation.access_scope = ferrodds::qos::PresentationAccessScope::Topic;
            r.presentation.coherent_access = true;
        },
        Some(QosPolicyId::Presentation),
    );
    assert_says(
        &said,
        &["PRESENTATION: writer offers access scope INSTANCE, reader requests access scope TOPIC, coherent"],
    );
}

#[test]
fn data_representation() {
    let said = mismatch(
        134,
        |w| w.data_representation.ids = vec![DataRepresentationId::XCDR2],
        |r| r.data_representation.ids = vec![DataRepresentationId::XCDR],
        Some(QosPolicyId::DataRepresentation),
    );
    assert_says(
        &said,
        &[
            "DATA_REPRESENTATION: writer offers XCDR2, reader requests XCDR1",
            "fix: have the writer use XCDR1 (its first DATA_REPRESENTATION), or the reader accept XCDR2",
        ],
    );
}

#[test]
fn partition() {
    let said = mismatch(
        135,
        |w| w.partition.names = vec!["plant/a".into()],
        |r| r.partition.names = vec!["plant/b".into()],
        None,
    );
    assert_says(
        &said,
        &[r#"partition: writer in "plant/a", reader in "plant/b", no name in common"#],
    );
}

/// Different type names: without type information (as with Cyclone DDS 0.10), names decide.
#[test]
fn type_name() {
    let domain = 136;
    let a = participant(domain, false);
    let b = participant(domain, false);
    let _w = a
        .create_writer(
            &a.create_topic::<Reading>("readings").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let r = b
        .create_reader(&b.create_topic::<Other>("readings").unwrap(), Qos::reader())
        .unwrap();
    let said = why(domain, "readings", "2");
    assert_eq!(r.subscription_matched_status().current_count, 0, "{said}");
    assert_says(
        &said,
        &[
            "type names differ: writer why::Reading, reader why::Other",
            "(no type information)",
        ],
    );
}

/// Types both sides described, and the reader's cannot take the writer's: the member.
#[test]
fn type_not_assignable() {
    let domain = 137;
    let a = participant(domain, true);
    let b = participant(domain, true);
    let _w = a
        .create_writer(
            &a.create_topic::<Reading>("readings").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let r = b
        .create_reader(
            &b.create_topic::<ReadingText>("readings").unwrap(),
            Qos::reader(),
        )
        .unwrap();
    let said = why(domain, "readings", "2");
    assert_eq!(r.subscription_matched_status().current_count, 0, "{said}");
    assert_says(
        &said,
        &[
            "type: the reader's why::ReadingText cannot take the writer's why::Reading",
            "value",
        ],
    );
}

/// A pair that matches says so, and a topic name off by case is pointed at.
#[test]
fn matching_pairs_and_near_topic_names() {
    let domain = 138;
    let a = participant(domain, true);
    let w = a
        .create_writer(
            &a.create_topic::<Reading>("Readings").unwrap(),
            Qos::writer(),
        )
        .unwrap();
    let b = participant(domain, true);
    let _r = b
        .create_reader(
            &b.create_topic::<Reading>("Readings").unwrap(),
            Qos::reader(),
        )
        .unwrap();
    w.wait_for_matched(1, Duration::from_secs(10)).unwrap();
    let said = why(domain, "Readings", "2");
    assert_says(&said, &["they match", "1 of 1 writer/reader pairs match"]);
    let said = why(domain, "readings", "2");
    assert_says(&said, &[r#"did you mean "Readings"?"#]);
}

/// Nothing on the domain: what was tried.
#[test]
fn nothing_discovered() {
    let said = why(139, "readings", "1");
    assert_says(
        &said,
        &[
            "no participant discovered on domain 139",
            "tried: interface lo (127.0.0.1)",
            "239.255.0.1:",
            "check: the others use domain 139",
        ],
    );
}

#[path = "../../../tests/support/cannot_run.rs"]
mod cannot_run;
mod process_guard;

use process_guard::Running;

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

/// Two network namespaces of the test's own joined by a veth pair (`10.231.7.1/24` and
/// `.2`: two hosts on one link, no other route), removed when dropped.
struct TwoHosts {
    names: [String; 2],
    links: [String; 2],
}

impl TwoHosts {
    /// `None` when namespaces cannot be made here (not root).
    /// `tag` tells apart the tests of one process (they run at once).
    fn create(test: &str, tag: char) -> Option<TwoHosts> {
        let tag = format!("{}{tag}", std::process::id() % 100_000);
        let names = [format!("fdwhy{tag}a"), format!("fdwhy{tag}b")];
        let links = [format!("fdw{tag}a"), format!("fdw{tag}b")];
        for n in &names {
            // A namespace left by a killed run of this test; usually there is none.
            let _ = Command::new("ip")
                .args(["netns", "del", n])
                .stderr(Stdio::null())
                .status();
        }
        if !ip(&["netns", "add", &names[0]]) {
            cannot_run::skip(test, "cannot create a network namespace (needs root)");
            return None;
        }
        let hosts = TwoHosts { names, links };
        let [na, nb] = &hosts.names;
        let [la, lb] = &hosts.links;
        assert!(ip(&["netns", "add", nb]));
        assert!(ip(&[
            "link", "add", la, "netns", na, "type", "veth", "peer", "name", lb, "netns", nb
        ]));
        for (n, l, a) in [(na, la, "10.231.7.1/24"), (nb, lb, "10.231.7.2/24")] {
            assert!(ip(&["-n", n, "addr", "add", a, "dev", l]));
            assert!(ip(&["-n", n, "link", "set", l, "up"]));
            assert!(ip(&["-n", n, "link", "set", "lo", "up"]));
        }
        Some(hosts)
    }

    /// A second interface on host `i`, on a network of its own (`10.231.9.0/24`) that
    /// reaches nobody, up, with multicast.
    fn lonely_interface(&self, i: usize) -> String {
        let name = format!("{}x", self.links[i]);
        let n = &self.names[i];
        // A veth pair whose other end, in the same namespace, has no address: no kernel
        // here has the dummy device.
        let peer = format!("{}y", self.links[i]);
        assert!(ip(&[
            "-n", n, "link", "add", &name, "type", "veth", "peer", "name", &peer
        ]));
        assert!(ip(&["-n", n, "link", "set", &peer, "up"]));
        assert!(ip(&["-n", n, "addr", "add", "10.231.9.2/24", "dev", &name]));
        assert!(ip(&["-n", n, "link", "set", &name, "multicast", "on"]));
        assert!(ip(&["-n", n, "link", "set", &name, "up"]));
        name
    }

    /// `ferrodds ARGS` on host `i`, on `interface`.
    fn ferrodds_on(&self, i: usize, interface: &str, args: &[&str]) -> Command {
        let mut c = Command::new("timeout");
        c.args(["40", "ip", "netns", "exec", &self.names[i]])
            .arg(env!("CARGO_BIN_EXE_ferrodds"))
            .args(args)
            .args(["--interface", interface])
            .env_remove("FERRODDS_CONFIG")
            .stdin(Stdio::null());
        c
    }

    fn multicast(&self, on: bool) {
        for (n, l) in self.names.iter().zip(&self.links) {
            let state = if on { "on" } else { "off" };
            assert!(ip(&["-n", n, "link", "set", l, "multicast", state]));
        }
    }

    /// `ferrodds ARGS` on host `i`, on its end of the link.
    fn ferrodds(&self, i: usize, args: &[&str]) -> Command {
        self.ferrodds_on(i, &self.links[i], args)
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// Two hosts on a link without multicast never find each other (each sends SPDP only to
/// its own host's ports); `why` on one says it found nobody, that the interface does not do
/// multicast, and the command that turns it on. With multicast on, the same `why` finds the
/// other host's writer: the cause named was the cause.
#[test]
fn nothing_discovered_between_hosts_without_multicast() {
    let test = "nothing_discovered_between_hosts_without_multicast";
    let Some(hosts) = TwoHosts::create(test, 'm') else {
        return;
    };
    hosts.multicast(false);
    let publisher = Running(
        hosts
            .ferrodds(0, &["shapes", "-P", "-t", "Square", "-c", "RED", "-d", "7"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a shape publisher on the first host"),
    );
    let why_on_b = || {
        let out = hosts
            .ferrodds(1, &["why", "Square", "-d", "7", "--duration", "2"])
            .output()
            .expect("run why on the second host");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let said = why_on_b();
    let link = &hosts.links[1];
    assert_says(
        &said,
        &[
            "no participant discovered on domain 7",
            &format!("interface {link} does not do multicast"),
            &format!("`ip link set {link} multicast on`"),
        ],
    );
    drop(publisher);
    // Participants look at the interface when they start: a new publisher, with multicast.
    hosts.multicast(true);
    let publisher = Running(
        hosts
            .ferrodds(0, &["shapes", "-P", "-t", "Square", "-c", "RED", "-d", "7"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a shape publisher on the first host"),
    );
    let out = hosts
        .ferrodds(1, &["why", "Square", "-d", "7", "--duration", "3"])
        .output()
        .expect("run why on the second host");
    drop(publisher);
    let said = String::from_utf8(out.stdout).unwrap();
    assert_says(&said, &["topic Square: 1 writer(s), 0 reader(s)"]);
}

/// No common interface: host B's `why` on an interface of a network host A is not on finds
/// nobody, and names B's other interface, on A's network, as the one to use; on it, the same
/// `why` finds A's writer.
#[test]
fn no_common_interface_names_the_interface_to_use() {
    let test = "no_common_interface_names_the_interface_to_use";
    let Some(hosts) = TwoHosts::create(test, 'i') else {
        return;
    };
    let lonely = hosts.lonely_interface(1);
    let publisher = Running(
        hosts
            .ferrodds(0, &["shapes", "-P", "-t", "Square", "-c", "RED", "-d", "8"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a shape publisher on the first host"),
    );
    let why_on = |interface: &str| {
        let out = hosts
            .ferrodds_on(
                1,
                interface,
                &["why", "Square", "-d", "8", "--duration", "2"],
            )
            .output()
            .expect("run why on the second host");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let said = why_on(&lonely);
    let link = &hosts.links[1];
    assert_says(
        &said,
        &[
            "no participant discovered on domain 8",
            &format!("tried: interface {lonely} (10.231.9.2)"),
            &format!("no common interface? {lonely} reaches none of the networks"),
            &format!("  {link} 10.231.7.2/24, multicast — `--interface {link}`"),
        ],
    );
    let said = why_on(link);
    drop(publisher);
    assert_says(&said, &["topic Square: 1 writer(s), 0 reader(s)"]);
}
