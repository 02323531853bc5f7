//! The options as writer and reader QoS, and the options FerroDDS cannot honour yet (each
//! refused with a line containing "not supported", which the suite records as a gap).

use ferrodds::qos::{DataRepresentationId, Durability, Presentation, PresentationAccessScope};
use ferrodds::Qos;

use super::options::{AccessScope, DurabilityKind, Representation, ShapeOptions};
use super::Log;

fn common(mut q: Qos, o: &ShapeOptions) -> Qos {
    q = if o.reliable {
        q.reliable()
    } else {
        q.best_effort()
    };
    // TRANSIENT and PERSISTENT: the writer keeps its history as TRANSIENT_LOCAL does; a
    // durability service (`ferrodds durability`) keeps it beyond the writer's life.
    q = q.durability(match o.durability {
        DurabilityKind::Volatile => Durability::Volatile,
        DurabilityKind::TransientLocal => Durability::TransientLocal,
        DurabilityKind::Transient => Durability::Transient,
        DurabilityKind::Persistent => Durability::Persistent,
    });
    // A writer offers exactly this representation; a reader accepts only it (the suite's
    // applications set a one-element list on both sides).
    q = q.data_representation([match o.representation {
        Representation::Xcdr1 => DataRepresentationId::XCDR,
        Representation::Xcdr2 => DataRepresentationId::XCDR2,
    }]);
    q = match o.history_depth {
        None => q.keep_last(1),
        Some(0) => q.keep_all(),
        Some(depth) => q.keep_last(depth),
    };
    if !o.deadline.is_zero() {
        q = q.deadline(o.deadline);
    }
    q
}

/// The writers' QoS.
pub(super) fn writer(o: &ShapeOptions) -> Qos {
    let mut q = common(Qos::writer(), o);
    // The suite's shape applications do not autodispose: a publisher that unregisters its
    // instances, or just ends with them registered, leaves them NOT_ALIVE_NO_WRITERS
    // (FinalInstanceState 0 and 2); only `--final-instance-state d` disposes, by itself.
    q = q.autodispose_unregistered_instances(false);
    if o.ownership_strength >= 0 {
        q = q.exclusive_ownership(o.ownership_strength);
    }
    if !o.lifespan.is_zero() {
        q = q.lifespan(o.lifespan);
    }
    q
}

/// The readers' QoS.
pub(super) fn reader(o: &ShapeOptions) -> Qos {
    let mut q = common(Qos::reader(), o);
    if o.ownership_strength >= 0 {
        q = q.exclusive_ownership(0);
    }
    if !o.time_filter.is_zero() {
        q = q.time_based_filter(o.time_filter);
    }
    q
}

/// The publisher's or subscriber's PRESENTATION: set only with coherent or ordered access,
/// as in the suite's application (an access scope alone does nothing).
pub(super) fn presentation(o: &ShapeOptions, log: &Log) -> Option<Presentation> {
    if !o.coherent && !o.ordered {
        if let Some(scope) = o.access_scope {
            log.debug(&format!(
                "    Presentation Access Scope = {} (ignored without --coherent or --ordered)",
                scope.name()
            ));
        }
        return None;
    }
    let scope = o.access_scope.unwrap_or(AccessScope::Instance);
    log.debug(&format!(
        "    Presentation Coherent Access = {}\n    Presentation Ordered Access = {}\n    Presentation Access Scope = {}",
        o.coherent,
        o.ordered,
        scope.name()
    ));
    Some(Presentation {
        access_scope: match scope {
            AccessScope::Instance => PresentationAccessScope::Instance,
            AccessScope::Topic => PresentationAccessScope::Topic,
            AccessScope::Group => PresentationAccessScope::Group,
        },
        coherent_access: o.coherent,
        ordered_access: o.ordered,
    })
}
