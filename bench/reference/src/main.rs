//! Times the reference safetensors implementation on the files stguard's bench uses.
//!   stg-reference-bench metadata FILE [--seconds S]
//!                                            best CPU time of SafeTensors::read_metadata over the
//!                                            file's bytes, repeated for S seconds of CPU (default
//!                                            1, at least 3 runs), as MB/s of header bytes; a
//!                                            refused header is timed as well (result= names
//!                                            the error, `ok` otherwise)
//!   stg-reference-bench load FILE            maps FILE and SafeTensors::deserialize-s it once
//!                                            (what safe_open does per file: a process per file)
//! The file is mapped read-only (the data sections of the bench's files are sparse).
use safetensors::SafeTensors;
use std::time::Duration;

fn cpu_time() -> Duration {
    let mut ts = libc_timespec { tv_sec: 0, tv_nsec: 0 };
    // CLOCK_PROCESS_CPUTIME_ID = 2 on Linux
    unsafe { clock_gettime(2, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[repr(C)]
struct libc_timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut libc_timespec) -> i32;
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
}

/// The whole file, mapped read-only and private (PROT_READ = 1, MAP_PRIVATE = 2).
fn map_file(path: &str) -> &'static [u8] {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(path).expect("open");
    let len = f.metadata().expect("stat").len() as usize;
    if len == 0 {
        return &[];
    }
    let p = unsafe { mmap(std::ptr::null_mut(), len, 1, 2, f.as_raw_fd(), 0) };
    if p as isize == -1 {
        panic!("mmap failed");
    }
    unsafe { std::slice::from_raw_parts(p, len) }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: stg-reference-bench metadata FILE RUNS | load FILE");
        std::process::exit(2);
    }
    let bytes = map_file(&args[2]);
    match args[1].as_str() {
        "load" => match SafeTensors::deserialize(bytes) {
            Ok(st) => println!("ok {}", st.len()),
            Err(e) => {
                println!("err {:?}", e);
                std::process::exit(1);
            }
        },
        "metadata" => {
            let seconds: f64 = match args.get(3).map(String::as_str) {
                Some("--seconds") => args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1.0),
                _ => 1.0,
            };
            let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap());
            let mut best = Duration::MAX;
            let mut tensors = 0;
            let mut runs = 0u32;
            let mut result = String::new();
            let start = cpu_time();
            while runs < 3 || (cpu_time() - start).as_secs_f64() < seconds {
                let t0 = cpu_time();
                // a refusal is timed too (bench_worst_case's adversarial headers)
                let outcome = SafeTensors::read_metadata(bytes).map(|(_, meta)| meta.tensors().len());
                let t = cpu_time() - t0;
                result = match outcome {
                    Ok(n) => {
                        tensors = n;
                        "ok".to_string()
                    }
                    Err(e) => format!("{:?}", e).split(|c: char| !c.is_alphanumeric()).next().unwrap_or("err").to_string(),
                };
                best = best.min(t);
                runs += 1;
            }
            println!(
                "tensors={} header_bytes={} runs={} cpu_best_s={:.6} cpu_best_MBps={:.1} result={}",
                tensors,
                header_len,
                runs,
                best.as_secs_f64(),
                header_len as f64 / best.as_secs_f64() / 1e6,
                result
            );
        }
        _ => std::process::exit(2),
    }
}
