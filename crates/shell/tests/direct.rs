//! Runs of one plain external program, which the session spawns itself, against the same runs
//! done by brush. The reference shell has an fd 3 open, which makes every run of it go through
//! brush (brush would pass the fd on). One test only: it counts the process-wide direct spawns.

use std::sync::{Arc, Mutex};

use shellwright_proc::Outcome;
use shellwright_shell::{PersistentShell, RunRequest, SessionOptions, direct_spawns};

async fn run(shell: &PersistentShell, command: &str) -> (Outcome, String) {
    let out = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&out);
    let request = RunRequest {
        command: command.into(),
        ..Default::default()
    };
    let result = shell
        .run(
            request,
            Box::new(move |c| sink.lock().expect("lock").push_str(&c)),
        )
        .await
        .expect("run")
        .outcome;
    let text = out.lock().expect("lock").clone();
    (result, text)
}

/// Runs `command` on the direct shell, then on the brush one; asserts that both gave the same.
async fn same_on_both(
    direct: &PersistentShell,
    brush: &PersistentShell,
    command: &str,
) -> (Outcome, String) {
    let got = run(direct, command).await;
    assert_eq!(got, run(brush, command).await, "{command}");
    got
}

fn finished(code: i32) -> Outcome {
    Outcome::Exited(code)
}

/// The environment a program printed, without the run tag (unique to each run).
fn untagged(env: &str) -> Vec<&str> {
    let mut lines: Vec<_> = env
        .lines()
        .filter(|line| !line.starts_with("SHELLWRIGHT_RUN="))
        .collect();
    lines.sort_unstable();
    lines
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_programs_are_spawned_directly_with_what_brush_would_give_them() {
    let scratch = Scratch::new();
    let scratch = &scratch.0;
    let scratch_text = scratch.display().to_string();
    let direct = PersistentShell::new(SessionOptions::default());
    let brush = PersistentShell::new(SessionOptions::default());
    run(&brush, "exec 3</dev/null").await;
    let setup = format!("export DIRECT_X=1 NOT_SET; HIDDEN=2; umask 027; cd {scratch_text}");
    for shell in [&direct, &brush] {
        assert_eq!(run(shell, &setup).await, (finished(0), String::new()));
    }

    let spawns = direct_spawns();
    let (result, out) = run(&direct, "/bin/echo  a  b").await;
    assert_eq!((result, out.as_str()), (finished(0), "a b\n"));
    assert_eq!(direct_spawns(), spawns + 1);

    // The same commands give the same output, status and shell state either way.
    for command in [
        "basename /a/b.txt .txt",
        "/bin/pwd",
        "sh -c umask",
        "/bin/false last",
        "ls ./no-such-file",
    ] {
        let spawns = direct_spawns();
        same_on_both(&direct, &brush, command).await;
        assert_eq!(direct_spawns(), spawns + 1, "{command}");
        same_on_both(&direct, &brush, "echo \"$? ${PIPESTATUS[*]} $_\"").await;
    }
    assert_eq!(
        run(&direct, "/bin/pwd").await.1,
        format!("{scratch_text}\n")
    );
    assert_eq!(run(&direct, "sh -c umask").await.1, "0027\n");
    run(&direct, "/bin/false last").await;
    let state = "echo \"$? ${PIPESTATUS[*]} $_\"";
    assert_eq!(run(&direct, state).await.1, "1 1 last\n");

    // The environment: the session's exported variables (set ones), `_` the program's path.
    let (_, env) = run(&direct, "/usr/bin/env").await;
    let (_, want) = run(&brush, "/usr/bin/env").await;
    assert_eq!(untagged(&env), untagged(&want));
    assert!(untagged(&env).contains(&"DIRECT_X=1"), "{env}");
    assert!(untagged(&env).contains(&"_=/usr/bin/env"), "{env}");
    assert!(!env.contains("HIDDEN") && !env.contains("NOT_SET"), "{env}");
    assert_eq!(
        env.lines()
            .filter(|l| l.starts_with("SHELLWRIGHT_RUN="))
            .count(),
        1
    );

    // Declined: brush runs these, as it would have.
    std::fs::write(
        scratch.join("script"),
        "echo from a script without a shebang\n",
    )
    .expect("write");
    std::fs::write(scratch.join("plain"), "").expect("write");
    run(&direct, "chmod +x script").await;
    let spawns = direct_spawns();
    for command in [
        "./script",
        "./plain",
        "no-such-program-shellwright",
        "./no-such-program",
    ] {
        same_on_both(&direct, &brush, command).await;
    }
    assert_eq!(
        run(&direct, "./script").await.1,
        "from a script without a shebang\n"
    );
    assert_eq!(run(&direct, "./plain").await.0, finished(126));
    assert_eq!(
        run(&direct, "no-such-program-shellwright").await,
        (
            finished(127),
            "error: command not found: no-such-program-shellwright\n".to_string()
        )
    );
    for setup in [
        "set -x",
        "set -e",
        "trap 'echo err' ERR",
        "trap 'echo dbg' DEBUG",
        "basename() { echo fn; }",
        "f() { :; }; export -f f",
        "exec 4</dev/null",
        // Last: nothing runs under `set -n`, `set +n` included.
        "set -n",
    ] {
        let undo = "set +xe; trap - ERR DEBUG; unset -f basename f; exec 4<&-";
        for shell in [&direct, &brush] {
            run(shell, setup).await;
        }
        same_on_both(&direct, &brush, "basename /a/b").await;
        for shell in [&direct, &brush] {
            run(shell, undo).await;
        }
    }
    assert_eq!(direct_spawns(), spawns);
}

/// A directory of this test's, removed when the test ends, passed or not.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("shellwright-direct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
