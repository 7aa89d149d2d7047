// Issue 13: the ingest threads run MDS_INGEST_NICE steps below the request thread, so on a busy
// machine queries get the CPU first. Linux only (per-thread nice values, read from
// /proc/<pid>/task/<tid>/stat); skipped elsewhere, where the setting does nothing. Storage plays
// no part in it, so one backend (SQLite) is enough.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { lowerThreadPriority } from '../../src/thread-priority.js';
import { freshDatabaseUrl } from '../helpers/harness.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { uniqueId } from '../helpers/batches.js';
import { sleep, startServer, type ServerProcess } from '../helpers/server-process.js';
import { pushBatch, rowCount } from '../helpers/server-calls.js';

const linux = fs.existsSync('/proc/thread-self');

/** Nice value of every thread of `pid`, by thread id (field 19 of stat). */
function niceByThread(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      out.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** The threads the pool reported as started ('ingest thread started' log lines). */
function startedThreads(output: string): { tid: number | null; nice: number | null }[] {
  return output
    .split('\n')
    .filter((l) => l.includes('"ingest thread started"'))
    .map((l) => JSON.parse(l) as { tid: number | null; nice: number | null });
}

describe('ingest thread priority', { skip: !linux && 'no per-thread priority here' }, () => {
  it('lowerThreadPriority lowers the calling thread alone, by the increment, at most to 19', () => {
    // This test file runs in its own process: lowering its main thread touches nothing else.
    const base = os.getPriority();
    const first = lowerThreadPriority(2);
    assert.deepEqual(first, { tid: process.pid, nice: Math.min(19, base + 2) }, 'the main thread: tid = pid');
    assert.equal(niceByThread(process.pid).get(process.pid), Math.min(19, base + 2));
    assert.deepEqual(lowerThreadPriority(40), { tid: process.pid, nice: 19 });
    assert.equal(niceByThread(process.pid).get(process.pid), 19);
    assert.deepEqual(lowerThreadPriority(0), { tid: process.pid, nice: null, reason: 'increment 0' });
  });

  for (const nice of [7, 0]) {
    describe(`a server with MDS_INGEST_NICE=${nice} and its ingest thread`, { timeout: 120_000 }, () => {
      let db: { url: string; drop(): Promise<void> };
      let server: ServerProcess;
      before(async () => {
        db = await freshDatabaseUrl('sqlite');
        server = await startServer({
          databaseUrl: db.url,
          // No thread replaced after idling (ingest-recycle.test.ts): exactly the thread started.
          // SQLite runs one ingest thread whatever MDS_INGEST_THREADS says (ingest-one-writer.test.ts).
          env: { MDS_INGEST_NICE: String(nice), MDS_INGEST_THREADS: '1', MDS_INGEST_RECYCLE_MS: '0' },
        });
      });
      after(async () => {
        await server.kill('SIGTERM');
        await db.drop();
      });

      it(
        nice > 0 ? 'runs the ingest thread lower, the request thread as started' : 'lowers no thread',
        async () => {
          const pid = server.child.pid as number;
          const base = os.getPriority(); // the server inherits this process's value
          // Ready means the migration ran on the ingest thread; its log line may still be on its way.
          for (
            const deadline = Date.now() + 60_000;
            startedThreads(server.output()).length < 1;
            await sleep(50)
          ) {
            assert.ok(Date.now() < deadline, `the ingest thread never reported:\n${server.output()}`);
          }
          const threads = niceByThread(pid);
          assert.equal(threads.get(pid), base, 'the request thread keeps its priority');
          const started = startedThreads(server.output());
          assert.equal(new Set(started.map((t) => t.tid)).size, 1);
          for (const t of started) {
            assert.ok(t.tid !== null && t.tid !== pid, JSON.stringify(t));
            const expected = nice > 0 ? Math.min(19, base + nice) : base;
            assert.equal(t.nice, nice > 0 ? expected : null);
            assert.equal(threads.get(t.tid), expected, `thread ${t.tid}`);
          }
          // No other thread of the process was touched.
          const others = [...threads].filter(([tid]) => !started.some((t) => t.tid === tid));
          assert.deepEqual(
            others.filter(([, n]) => n !== base),
            [],
          );
        },
      );

      it('ingests a batch whole on those threads', async () => {
        const source = `prio${nice}`;
        const batchId = uniqueId(source);
        const res = await pushBatch(server.port, bigEtfBatch(1000, source, batchId).body);
        assert.equal(res.status, 200, res.body.slice(0, 300));
        assert.equal(await rowCount(server.port, source), 1000);
      });
    });
  }
});
