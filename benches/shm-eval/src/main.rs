// Issue 13's evaluation of iceoryx2 (not part of FerroDDS; docs in Cargo.toml): iceoryx2 slices of SIZE bytes
// between two processes, every byte written by the publisher and read by the subscriber,
// reliable (the publisher waits for room), beside a plain memcpy of the same bytes.
//
//   shm-eval sub COUNT SIZE      (start first)
//   shm-eval pub COUNT SIZE
//   shm-eval memcpy COUNT SIZE
use iceoryx2::prelude::*;
use std::time::{Duration, Instant};

fn service(
    node: &Node<ipc::Service>,
) -> iceoryx2::service::port_factory::publish_subscribe::PortFactory<ipc::Service, [u8], ()> {
    node.service_builder(&"ferrodds/eval/large".try_into().unwrap())
        .publish_subscribe::<[u8]>()
        .enable_safe_overflow(false)
        .subscriber_max_buffer_size(8)
        .history_size(0)
        .open_or_create()
        .unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let count: usize = args[2].parse().unwrap();
    let size: usize = args[3].parse().unwrap();
    match args[1].as_str() {
        "memcpy" => {
            let src = vec![7u8; size];
            let mut dst = vec![0u8; size];
            let start = Instant::now();
            for i in 0..count {
                dst.copy_from_slice(&src);
                dst[i % size] ^= 1;
                std::hint::black_box(&dst);
            }
            let s = start.elapsed().as_secs_f64();
            println!("memcpy {} samples/s", count as f64 / s);
        }
        "pub" => {
            let node = NodeBuilder::new().create::<ipc::Service>().unwrap();
            let svc = service(&node);
            let publisher = svc
                .publisher_builder()
                .initial_max_slice_len(size)
                .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
                .create()
                .unwrap();
            let src = vec![7u8; size];
            std::thread::sleep(Duration::from_millis(500));
            let start = Instant::now();
            for i in 0..count {
                let sample = publisher.loan_slice_uninit(size).unwrap();
                let mut sample = sample.write_from_slice(&src);
                sample.payload_mut()[0] = i as u8;
                sample.send().unwrap();
            }
            let s = start.elapsed().as_secs_f64();
            println!("pub {} samples/s", count as f64 / s);
            std::thread::sleep(Duration::from_millis(500));
        }
        "sub" => {
            let node = NodeBuilder::new().create::<ipc::Service>().unwrap();
            let svc = service(&node);
            let subscriber = svc.subscriber_builder().create().unwrap();
            let mut n = 0;
            let mut sum = 0u64;
            let mut start = None;
            let deadline = Instant::now() + Duration::from_secs(60);
            while n < count && Instant::now() < deadline {
                match subscriber.receive().unwrap() {
                    Some(sample) => {
                        start.get_or_insert_with(Instant::now);
                        // Read every byte (8 at a time).
                        sum += sample
                            .payload()
                            .chunks_exact(8)
                            .map(|c| c[0] as u64 ^ c[7] as u64)
                            .sum::<u64>();
                        n += 1;
                    }
                    None => std::thread::yield_now(),
                }
            }
            let s = start.map(|t| t.elapsed().as_secs_f64()).unwrap_or(1.0);
            println!("sub {n} samples, {} samples/s (sum {sum})", n as f64 / s);
        }
        _ => panic!("pub|sub|memcpy"),
    }
}
