//! The participant's side of sample channels (`ferrodds_transport::sample_channel`): a
//! loaning writer's channel, and its readers' subscriptions, which the RTPS readers open
//! when a DATA first refers to a writer's channel.

use ferrodds_rtps::payload::{ChannelOpener, ChunkSource, ReceivedPayload};
use ferrodds_rtps::wire::Guid;
use ferrodds_transport::{ChannelReader, Taken};

/// Opens the channels of the host's writers for the readers of a participant that has
/// shared memory.
#[derive(Debug)]
pub(crate) struct SharedMemoryChannels;

impl ChannelOpener for SharedMemoryChannels {
    fn open(&self, writer: Guid) -> Option<Box<dyn ChunkSource>> {
        match ChannelReader::open(&writer.to_bytes()) {
            Ok(reader) => Some(Box::new(Subscription(reader))),
            Err(e) => {
                tracing::debug!(?writer, error = %e, "cannot open the writer's sample channel");
                None
            }
        }
    }
}

#[derive(Debug)]
struct Subscription(ChannelReader);

impl ChunkSource for Subscription {
    fn take(&mut self, chunk: u64) -> Option<ReceivedPayload> {
        Some(match self.0.take(chunk)? {
            Taken::InPlace(bytes) => ReceivedPayload::Shared(bytes),
            Taken::Copied(v) => ReceivedPayload::Owned(v),
        })
    }
}
