//! QoS from Python: `ferrodds.core.Qos` hands its policies over as a list of tuples
//! (`("reliability", "reliable", max_blocking_ns)`, ...), applied over the DCPS defaults.

use std::time::Duration;

use ferrodds::qos::{
    DataRepresentationId, DestinationOrder, Durability, DurabilityService, History, LivelinessKind,
    Presentation, PresentationAccessScope, ResourceLimits,
};
use ferrodds::Qos;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

/// Applies the policies in `policies` (tuples, see `ferrodds/core.py`) to `qos`.
pub(crate) fn apply(mut qos: Qos, policies: &Bound<'_, PyAny>) -> PyResult<Qos> {
    for policy in policies.try_iter()? {
        let policy = policy?;
        let policy = policy.cast::<PyTuple>()?;
        let name: String = policy.get_item(0)?.extract()?;
        let arg = |i: usize| policy.get_item(i);
        qos = match name.as_str() {
            "reliability" => match arg(1)?.extract::<String>()?.as_str() {
                "reliable" => qos
                    .reliable()
                    .max_blocking_time(duration(arg(2)?.extract()?)),
                _ => qos.best_effort(),
            },
            "durability" => match arg(1)?.extract::<String>()?.as_str() {
                "transient_local" => qos.transient_local(),
                "volatile" => qos.volatile(),
                "transient" => qos.durability(Durability::Transient),
                "persistent" => qos.durability(Durability::Persistent),
                other => {
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "durability {other:?}: not volatile, transient_local, transient or persistent"
                )))
                }
            },
            "durability_service" => {
                let cleanup: i64 = arg(1)?.extract()?;
                let depth: i32 = arg(2)?.extract()?;
                let max_samples: i32 = arg(3)?.extract()?;
                qos.durability_service(DurabilityService {
                    service_cleanup_delay: ferrodds::qos::PolicyDuration::from_std(duration(
                        cleanup,
                    )),
                    history: if depth > 0 {
                        History::KeepLast { depth }
                    } else {
                        History::KeepAll
                    },
                    resource_limits: ResourceLimits {
                        max_samples,
                        ..ResourceLimits::default()
                    },
                })
            }
            "presentation" => {
                let access_scope = match arg(1)?.extract::<String>()?.as_str() {
                    "topic" => PresentationAccessScope::Topic,
                    "group" => PresentationAccessScope::Group,
                    _ => PresentationAccessScope::Instance,
                };
                qos.presentation(Presentation {
                    access_scope,
                    coherent_access: arg(2)?.extract()?,
                    ordered_access: arg(3)?.extract()?,
                })
            }
            "history" => match arg(1)?.extract::<Option<u32>>()? {
                Some(depth) => qos.keep_last(depth),
                None => qos.keep_all(),
            },
            "resource_limits" => match arg(1)?.extract::<i64>()? {
                n if n > 0 => qos.max_samples(n as u32),
                _ => qos,
            },
            "partition" => qos.partition(arg(1)?.extract::<Vec<String>>()?),
            "deadline" => qos.deadline(duration(arg(1)?.extract()?)),
            "latency_budget" => qos.latency_budget(duration(arg(1)?.extract()?)),
            "user_data" => qos.user_data(arg(1)?.extract::<Vec<u8>>()?),
            "topic_data" => qos.topic_data(arg(1)?.extract::<Vec<u8>>()?),
            "group_data" => qos.group_data(arg(1)?.extract::<Vec<u8>>()?),
            "lifespan" => qos.lifespan(duration(arg(1)?.extract()?)),
            "time_based_filter" => qos.time_based_filter(duration(arg(1)?.extract()?)),
            "ownership" => match arg(1)?.extract::<Option<i32>>()? {
                Some(strength) => qos.exclusive_ownership(strength),
                None => qos,
            },
            "destination_order" => {
                qos.destination_order(match arg(1)?.extract::<String>()?.as_str() {
                    "source" => DestinationOrder::BySourceTimestamp,
                    _ => DestinationOrder::ByReceptionTimestamp,
                })
            }
            "reader_data_lifecycle" => {
                let delay = |ns: i64| (0..i64::MAX / 2).contains(&ns).then(|| duration(ns));
                qos.reader_data_lifecycle(delay(arg(1)?.extract()?), delay(arg(2)?.extract()?))
            }
            "writer_data_lifecycle" => {
                qos.autodispose_unregistered_instances(arg(1)?.extract::<bool>()?)
            }
            "liveliness" => {
                let kind = match arg(1)?.extract::<String>()?.as_str() {
                    "manual_by_participant" => LivelinessKind::ManualByParticipant,
                    "manual_by_topic" => LivelinessKind::ManualByTopic,
                    _ => LivelinessKind::Automatic,
                };
                let ns: i64 = arg(2)?.extract()?;
                // cyclonedds-python's infinite duration is i64::MAX nanoseconds.
                let lease = (0..i64::MAX / 2)
                    .contains(&ns)
                    .then(|| Duration::from_nanos(ns as u64));
                qos.liveliness(kind, lease)
            }
            "data_representation" => {
                let ids: Vec<i16> = arg(1)?.extract()?;
                qos.data_representation(ids.into_iter().map(DataRepresentationId))
            }
            // Policies FerroDDS keeps but does not act on yet, and the Python-side ones
            // (entity names, properties) are accepted as cyclonedds-python accepts them.
            _ => qos,
        };
    }
    Ok(qos)
}

/// A duration given in nanoseconds (cyclonedds-python's unit); negative or huge ones mean
/// "infinite".
fn duration(ns: i64) -> Duration {
    if !(0..i64::MAX / 2).contains(&ns) {
        Duration::from_secs(u64::from(u32::MAX))
    } else {
        Duration::from_nanos(ns as u64)
    }
}
