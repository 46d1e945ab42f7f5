//! The one lock helper of the workspace.
//!
//! A thread that panics while it holds a `Mutex` poisons it; every later `lock()` then returns an
//! error. Everything the crates keep under a mutex is left consistent between statements (queues,
//! tables, counters), and a panic is already reported where it happened, so a poisoned lock is
//! taken as it is rather than turned into a second panic on another thread.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, taking it over when a panicking holder poisoned it.
pub fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_taken_with_its_value() {
        let mutex = std::sync::Arc::new(Mutex::new(1));
        let holder = std::sync::Arc::clone(&mutex);
        let _ = std::thread::spawn(move || {
            let mut value = holder.lock().expect("not poisoned yet");
            *value = 2;
            panic!("poison it");
        })
        .join();
        assert!(mutex.is_poisoned());
        assert_eq!(*lock(&mutex), 2);
    }
}
