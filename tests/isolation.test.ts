// What a run starts is cut off from the host: its processes lead sessions of their own without
// the host's controlling terminal, redirections to the terminal fail, and `ulimit` limits the run
// (its processes) and never the host. The terminal case runs a real program under a real
// pseudo-terminal (tests/fixtures/terminal-host.cjs): a Shell run inside it cannot read the
// terminal or be reached by Ctrl+C, and what a person types still reaches the program.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { PtySession, Shell, executeShell } from '../index.js'
import { collector, waitUntil } from './helpers.js'

async function run(command: string, shell?: Shell) {
  const out = collector()
  const options = { command, timeoutMs: 10_000 }
  const result = await (shell ? shell.run(options, out.push) : executeShell(options, out.push))
  return { text: out.text, exitCode: result.exitCode }
}

/** A `Max …` line of `/proc/<pid>/limits`: its soft and hard values. */
function limitOf(limits: string, name: string): string {
  const line = limits.split('\n').find((l) => l.startsWith(name))
  if (!line) throw new Error(`no ${name} in limits`)
  return line.slice(name.length).trim().split(/\s+/).slice(0, 2).join(' ')
}

const hostOpenFiles = () => limitOf(readFileSync('/proc/self/limits', 'utf8'), 'Max open files')
/** This process's effective capabilities include CAP_SYS_RESOURCE (raising hard limits). */
const mayRaiseHardLimits = () => {
  const caps = /CapEff:\s*([0-9a-f]+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '0'
  return ((BigInt(`0x${caps}`) >> 24n) & 1n) === 1n
}
/** brush's message for a redirection to the terminal of the host `pid`, refused. */
const refused = (pid = process.pid) =>
  new RegExp(`^error: failed to redirect to /proc/${pid}/fd/\\d+: No such device or address \\(os error 6\\)\\n`)

describe('ulimit in a run', () => {
  it('limits the processes the run starts and reads back what was set, never touching the host', async () => {
    const host = hostOpenFiles()
    expect(await run('ulimit -n 64; echo set; ulimit -n; ulimit -Hn')).toEqual({ text: 'set\n64\n64\n', exitCode: 0 })
    expect(await run('ulimit -n 64; grep "Max open files" /proc/self/limits')).toEqual({
      text: 'Max open files            64                   64                   files     \n',
      exitCode: 0,
    })
    expect(await run('ulimit -f 4; grep "Max file size" /proc/self/limits')).toEqual({
      text: 'Max file size             4096                 4096                 bytes     \n',
      exitCode: 0,
    })
    expect(hostOpenFiles()).toBe(host)
  })

  it('keeps a subshell’s limits in the subshell and the session’s across runs', async () => {
    const [soft, hard] = hostOpenFiles().split(' ')
    expect(await run('(ulimit -Sn 50; ulimit -n); ulimit -n')).toEqual({ text: `50\n${soft}\n`, exitCode: 0 })
    const shell = new Shell()
    expect(await run('ulimit -Sn 60', shell)).toEqual({ text: '', exitCode: 0 })
    expect(await run('ulimit -n; ulimit -Hn; grep "Max open files" /proc/self/limits', shell)).toEqual({
      text: `60\n${hard}\nMax open files            ${'60'.padEnd(21)}${hard.padEnd(21)}files     \n`,
      exitCode: 0,
    })
    expect(await run('ulimit -n', new Shell())).toEqual({ text: `${soft}\n`, exitCode: 0 })
    expect(hostOpenFiles()).toBe(`${soft} ${hard}`)
  })

  it('words and orders everything as bash 5 does', async () => {
    const raise = mayRaiseHardLimits()
    expect(
      await run('ulimit -n 64; ulimit -n 100; echo "rc=$?"; ulimit -Sn 32; ulimit -n; ulimit -Hn; ulimit -n hard; ulimit -n'),
    ).toEqual(
      raise
        ? { text: 'rc=0\n32\n100\n100\n', exitCode: 0 }
        : {
            text: 'bash: line 1: ulimit: open files: cannot modify limit: Operation not permitted\nrc=1\n32\n64\n64\n',
            exitCode: 0,
          },
    )
    expect(await run('ulimit -Hn 16')).toEqual({
      text: 'bash: line 1: ulimit: open files: cannot modify limit: Invalid argument\n',
      exitCode: 1,
    })
    expect(await run('ulimit -n abc; ulimit -n 0x10; ulimit -c 18014398509481984')).toEqual({
      text:
        'bash: line 1: ulimit: abc: invalid number\nbash: line 1: ulimit: 0x10: invalid hex number\n' +
        'bash: line 1: ulimit: 18014398509481984: limit out of range\n',
      exitCode: 1,
    })
    expect(await run('ulimit -p; ulimit -Hp; ulimit -p 1')).toEqual({
      text: '8\n8\nbash: line 1: ulimit: pipe size: cannot modify limit: Invalid argument\n',
      exitCode: 1,
    })
    for (const option of ['-b', '-k', '-P', '-T', '-w']) {
      expect(await run(`ulimit ${option}`)).toEqual({
        text: `bash: line 1: ulimit: ${option}: invalid option\nulimit: usage: ulimit [-SHabcdefiklmnpqrstuvxPRT] [limit]\n`,
        exitCode: 2,
      })
    }
    // Several resources: one row each, in the order given; the last may take the operand.
    expect(await run('ulimit -c 0 -f 8; ulimit -f -c; ulimit -c -n 50; ulimit -n')).toEqual({
      text: 'file size                   (blocks, -f) 8\ncore file size              (blocks, -c) 0\ncore file size              (blocks, -c) 0\n50\n',
      exitCode: 0,
    })
  })

  it('prints -a and -Ha exactly as bash does with the same limits', async () => {
    for (const command of ['ulimit -a', 'ulimit -Ha', 'ulimit -c 0; ulimit -n 77; ulimit -Sa']) {
      const bash = spawnSync('bash', ['-c', command], { encoding: 'utf8' })
      expect(bash.status).toBe(0)
      expect(await run(command)).toEqual({ text: bash.stdout, exitCode: 0 })
    }
  })
})

describe('a run’s processes and the host’s terminal', () => {
  it('starts every process in a session and process group of its own', async () => {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const hostSession = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3])
    // Spawned directly (one plain program), then forked by brush.
    for (const command of ['cat /proc/self/stat', 'cat /proc/self/stat; :', 'cat /proc/self/stat | cat']) {
      const { text } = await run(command)
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
      const pid = Number(text.split(' ')[0])
      expect({ group: Number(fields[2]), session: Number(fields[3]) }).toEqual({ group: pid, session: pid })
      expect(pid).not.toBe(hostSession)
    }
  })

  it('fails a redirection to /dev/tty at once, in builtins and programs alike', async () => {
    for (const command of ['read -r x < /dev/tty', 'exec 3</dev/tty', 'echo hi > /dev/tty', 'cat < /dev/tty']) {
      const { text, exitCode } = await run(`${command}; echo "status $?"`)
      expect(text).toMatch(refused())
      expect(text.endsWith('status 1\n')).toBe(true)
      expect(exitCode).toBe(0)
    }
  })

  it('keeps a program running in a real terminal out of the run’s reach, and the run out of its terminal', async () => {
    const session = new PtySession()
    const fixture = join(__dirname, 'fixtures', 'terminal-host.cjs')
    let out = ''
    const running = session.start({ command: `exec '${process.execPath}' '${fixture}'`, timeoutMs: 60_000 }, (chunk) => {
      out += chunk
    })
    // What the program printed after `tag` (the terminal may have echoed `^C` before it).
    const printed = (tag: string) => {
      const line = out.split(/\r?\n/).find((l) => l.includes(`${tag} `))
      if (line === undefined) throw new Error(`no ${tag} line in ${JSON.stringify(out)}`)
      return JSON.parse(line.slice(line.indexOf(`${tag} `) + tag.length + 1))
    }
    await waitUntil(() => out.includes('INTERRUPT-NOW') || out.includes('FAILED'), 30_000, 'the runs that try the terminal')
    expect(out).not.toContain('FAILED')
    session.write('\x03')
    await waitUntil(() => out.includes('TYPE-NOW'), 30_000, 'the run interrupted by Ctrl+C to end')
    session.write('typed-by-user\r')
    expect(await running).toEqual({ exitCode: 0, cancelled: false, timedOut: false })

    const report = printed('REPORT')
    // The program itself has the terminal: opening /dev/tty works there.
    expect(report.host.opensTerminal).toBe(true)
    // Its runs do not: the shell's redirection and a program's own open fail at once.
    expect(report.read.text).toMatch(refused(report.host.pid))
    expect(report.read.text.endsWith('read 1\n')).toBe(true)
    expect(report.read.ms).toBeLessThan(2_000)
    expect(report.device.text).toMatch(refused(report.host.pid))
    expect(report.device.text.endsWith('device 1\n')).toBe(true)
    expect(report.open.text).toBe('sh: 1: cannot open /dev/tty: No such device or address\nopen 2\nnot a tty\n')
    for (const way of [report.direct, report.forked]) {
      expect(way.identity.session).toBe(way.identity.pid)
      expect(way.identity.group).toBe(way.identity.pid)
      expect(way.identity.session).not.toBe(report.host.session)
    }
    // Ctrl+C reached the program (its foreground group) and not the run's sleeping process.
    expect(printed('SLEPT')).toMatchObject({
      text: 'started\nslept 0\n',
      exitCode: 0,
      interrupted: true,
    })
    // What the person typed went to the program.
    expect(printed('OUTER-GOT')).toBe('typed-by-user\n')
  }, 90_000)
})
