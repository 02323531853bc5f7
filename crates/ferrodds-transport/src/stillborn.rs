//! Shared-memory segments of processes killed while they made them.
//!
//! iceoryx2 makes a segment in two steps: it creates the file in `/dev/shm` empty (and
//! write-only), then gives it its size. A process killed between the two leaves an empty
//! file behind, and iceoryx2 0.10, opening a segment, waits for an empty one to get its
//! size without a deadline: the next process whose node cleans up after the dead one, or
//! that opens one of its services, waits forever. (Seen: `ferrodds demo`'s pong hanging
//! at its start in CI behind an empty connection a test killed hours before had left.)
//! The size follows the creation within microseconds, so an empty file of iceoryx2's older
//! than [`GRACE`] is stillborn, and is removed here before iceoryx2 could open it.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use iceoryx2::prelude::*;

/// How old an empty segment is when it counts as stillborn.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// How often an empty segment younger than [`GRACE`] is looked at again.
const RECHECK: Duration = Duration::from_millis(10);

/// What a look at the segments did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Swept {
    /// Stillborn segments removed.
    pub(crate) removed: usize,
    /// Empty segments left because they were too young to tell.
    pub(crate) young_left: bool,
}

/// Removes the stillborn segments of `/dev/shm` (see the module's comment). Waits at most
/// [`GRACE`] for empty segments too young to tell, which is rare: an empty segment of a
/// live process lasts microseconds.
pub(crate) fn remove_stillborn_segments() -> Swept {
    remove_in(Path::new("/dev/shm"), &prefix(), GRACE, GRACE + RECHECK)
}

/// [`remove_stillborn_segments`] without waiting, for a sending thread: whether no empty
/// segment was left (too young to tell), so that iceoryx2 may clean up after dead nodes.
pub(crate) fn remove_stillborn_segments_now() -> bool {
    !remove_in(Path::new("/dev/shm"), &prefix(), GRACE, Duration::ZERO).young_left
}

fn prefix() -> Vec<u8> {
    Config::global_config().global.prefix.as_bytes().to_vec()
}

/// Removes the empty regular files of `dir` whose name starts with `prefix` and that were
/// last written at least `grace` ago, looking again for at most `patience` at those
/// younger.
fn remove_in(dir: &Path, prefix: &[u8], grace: Duration, patience: Duration) -> Swept {
    use std::os::unix::ffi::OsStrExt;
    let deadline = Instant::now() + patience;
    let mut removed = 0;
    loop {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Swept {
                removed,
                young_left: false,
            };
        };
        let mut young = false;
        for entry in entries.flatten() {
            if !entry.file_name().as_bytes().starts_with(prefix) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() || meta.len() != 0 {
                continue;
            }
            let age = meta
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok())
                .unwrap_or(Duration::ZERO);
            if age < grace {
                young = true;
                continue;
            }
            // Another process may remove it first; one not ours may not be removable (and
            // then iceoryx2 may still wait on it: said, not hidden).
            match std::fs::remove_file(entry.path()) {
                Ok(()) => {
                    removed += 1;
                    tracing::warn!(
                        segment = %entry.path().display(),
                        "removed an empty shared-memory segment a killed process left behind"
                    );
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => tracing::warn!(
                    segment = %entry.path().display(),
                    %err,
                    "cannot remove an empty shared-memory segment a killed process left \
                     behind: iceoryx2 may wait on it"
                ),
            }
        }
        if !young || Instant::now() >= deadline {
            return Swept {
                removed,
                young_left: young,
            };
        }
        std::thread::sleep(RECHECK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{File, FileTimes};

    fn file(dir: &Path, name: &str, len: usize, age: Duration) {
        let path = dir.join(name);
        std::fs::write(&path, vec![7u8; len]).unwrap();
        let then = SystemTime::now() - age;
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_times(FileTimes::new().set_modified(then).set_accessed(then))
            .unwrap();
    }

    #[test]
    fn only_old_empty_segments_of_the_prefix_are_removed() {
        let dir = std::env::temp_dir().join(format!("ferrodds-stillborn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = Duration::from_secs(3600);
        file(&dir, "iox2_a.connection", 0, old);
        file(&dir, "iox2_b.dynamic", 0, Duration::from_secs(5));
        file(&dir, "iox2_c.connection", 100, old);
        file(&dir, "other_d.connection", 0, old);
        std::fs::create_dir_all(dir.join("iox2_e")).unwrap();
        let started = Instant::now();
        let grace = Duration::from_secs(1);
        let swept = remove_in(&dir, b"iox2_", grace, grace);
        assert_eq!((swept.removed, swept.young_left), (2, false));
        assert!(
            started.elapsed() < Duration::from_millis(500),
            "nothing young to wait on"
        );
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["iox2_c.connection", "iox2_e", "other_d.connection"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_young_empty_segment_is_waited_on_and_removed_once_it_stays_empty() {
        let dir = std::env::temp_dir().join(format!("ferrodds-young-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // One about to get its size (a live creator), one that never will.
        file(&dir, "iox2_live.data", 0, Duration::ZERO);
        file(&dir, "iox2_dead.data", 0, Duration::from_millis(100));
        let grower = {
            let path = dir.join("iox2_live.data");
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::write(path, [1u8; 64]).unwrap();
            })
        };
        let started = Instant::now();
        let grace = Duration::from_millis(400);
        // Without patience: nothing old to remove, and young ones left.
        let now = remove_in(&dir, b"iox2_", grace, Duration::ZERO);
        assert_eq!((now.removed, now.young_left), (0, true));
        let swept = remove_in(&dir, b"iox2_", grace, grace + RECHECK);
        assert_eq!((swept.removed, swept.young_left), (1, false));
        let took = started.elapsed();
        grower.join().unwrap();
        assert!(
            took >= Duration::from_millis(290),
            "waited for it to age: {took:?}"
        );
        assert!(took < Duration::from_secs(5), "bounded: {took:?}");
        assert!(dir.join("iox2_live.data").exists());
        assert!(!dir.join("iox2_dead.data").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
