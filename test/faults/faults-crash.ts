// Issue 6, faults: SIGKILL of the real server at several points of an etf_daily batch (50,000
// records where the kill point depends on the batch's work). After a restart the batch is wholly
// applied ("accepted", every row queryable) or absent (404 / 4040, no row), and a retry applies
// it exactly once. Run once per backend, side by side: faults-crash-{sqlite,postgres}.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { QUERY_KEY, type Backend } from '../helpers/harness.js';
import { bigEtfBatch } from '../helpers/big-batch.js';
import { batch, etfBar, uniqueId } from '../helpers/batches.js';
import {
  INGEST_HEADERS as HEADERS,
  INGEST_PATH,
  ingestLogged,
  PAUSE_MARKER,
  request,
  serverOnFreshDatabase,
  sleep,
  StagedPost,
  type ServerProcess,
} from '../helpers/server-process.js';
import { batchState, pushBatch, rowCount } from '../helpers/server-calls.js';

const ROWS = 50_000;
/**
 * For kill points that do not depend on how long the batch takes to parse and write (before its
 * body is whole, or after its answer): the outcome is decided by the point, not by the size, and
 * the restart, retry and duplicate then write a tenth of the rows.
 */
const SMALL_ROWS = 5_000;

interface Scenario {
  name: string;
  rows: number;
  /** The outcome when the kill point is deterministic; otherwise either is correct. */
  expect?: 'absent' | 'applied';
  /** Env of the server that gets killed. */
  env?: Record<string, string>;
  /** Drives the staged POST up to the kill point. */
  drive(post: StagedPost, server: ServerProcess, batchId: string): Promise<void>;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'early: right after the request headers',
    rows: SMALL_ROWS,
    expect: 'absent',
    drive: async (_post, server) => ingestLogged(server),
  },
  {
    name: 'mid-parse: after half of the body',
    rows: SMALL_ROWS,
    expect: 'absent',
    drive: async (post, server) => {
      await post.sendUpTo(0.5);
      await ingestLogged(server);
    },
  },
  {
    name: 'body complete, killed at once (parsing or validating)',
    rows: ROWS,
    drive: async (post) => {
      await post.sendUpTo(1);
    },
  },
  {
    name: 'body complete, killed after 2000 ms (writing, or committed)',
    rows: ROWS,
    drive: async (post) => {
      await post.sendUpTo(1);
      await sleep(2000);
    },
  },
  {
    name: 'mid-write, just before commit (every row written; test-only pause hook)',
    rows: ROWS,
    expect: 'absent',
    env: { MDS_TEST_PAUSE_BEFORE_COMMIT_MS: '60000' },
    drive: async (post, server, batchId) => {
      await post.sendUpTo(1);
      await server.waitForOutput(`${PAUSE_MARKER} ${batchId}`, 120_000);
    },
  },
  {
    name: 'right after the answer (an acknowledged batch is durable)',
    rows: SMALL_ROWS,
    expect: 'applied',
    drive: async (post) => {
      await post.sendUpTo(1);
      const raw = await post.response();
      assert.match(raw, /^HTTP\/1\.1 200 /);
    },
  },
];

function batchKills(backend: Backend): void {
  describe(`faults: SIGKILL during a batch (${backend})`, { timeout: 900_000 }, () => {
    const fx = serverOnFreshDatabase(backend);

    SCENARIOS.forEach((sc, i) => {
      it(`${sc.name}, ${sc.rows} records`, async (t) => {
        const source = `crash${i}`;
        const batchId = uniqueId(`crash${i}`);
        const { body } = bigEtfBatch(sc.rows, source, batchId);

        let server = await fx.start({ env: sc.env ?? {}, hooks: true });
        const post = new StagedPost(server.port, INGEST_PATH, body, HEADERS);
        await sc.drive(post, server, batchId);
        const exit = await fx.stop('SIGKILL');
        post.destroy();
        assert.equal(exit?.signal, 'SIGKILL', 'the server was killed, not finished on its own');

        server = await fx.start();
        const state = await batchState(server.port, batchId);
        const rows = await rowCount(server.port, source);
        if (state.status === 404) {
          assert.equal(state.code, 4040);
          assert.equal(rows, 0, 'an absent batch left no row behind');
        } else {
          assert.equal(state.status, 200);
          assert.equal(state.batchStatus, 'accepted');
          assert.equal(state.accepted, sc.rows);
          assert.equal(rows, sc.rows, 'a registered batch has every row');
        }
        const outcome = state.status === 404 ? 'absent' : 'applied';
        t.diagnostic(`after the kill: ${outcome}`);
        if (sc.expect) assert.equal(outcome, sc.expect);

        // The retry applies it exactly once; a further retry is a duplicate.
        const retry = await pushBatch(server.port, body);
        assert.equal(retry.status, 200, retry.body);
        assert.equal(
          (JSON.parse(retry.body) as { status: string }).status,
          state.status === 404 ? 'accepted' : 'duplicate',
        );
        const again = await pushBatch(server.port, body);
        assert.equal(again.status, 200);
        assert.equal((JSON.parse(again.body) as { status: string }).status, 'duplicate');
        assert.equal(await rowCount(server.port, source), sc.rows);
        const final = await batchState(server.port, batchId);
        assert.equal(final.batchStatus, 'accepted');
        assert.equal(final.accepted, sc.rows);

        await fx.stop('SIGTERM');
      });
    });
  });
}

/** `n` etf_daily rows of one partition (date, source), symbols from `first` in steps of `step`. */
function partitionBatch(
  n: number,
  opts: { first: number; step: number; close: number; snapshot: boolean; batchId: string },
): Buffer {
  const data = Array.from({ length: n }, (_, i) =>
    etfBar(String(opts.first + i * opts.step), SNAP_DATE, { source: SNAP_SOURCE, close: opts.close }),
  );
  const b = batch('etf_daily', data, {
    batchId: opts.batchId,
    source: SNAP_SOURCE,
    businessDate: SNAP_DATE,
    snapshotType: opts.snapshot ? 'full_snapshot' : 'incremental',
  });
  return Buffer.from(JSON.stringify(b));
}

const SNAP_DATE = '2024-05-06';
const SNAP_SOURCE = 'snapcrash';

function snapshotKill(backend: Backend): void {
  describe(`faults: SIGKILL during a ${ROWS}-record full snapshot (${backend})`, { timeout: 600_000 }, () => {
    const fx = serverOnFreshDatabase(backend);

    it('killed after the upserts and the prune, before commit: the old partition is intact', async () => {
      // 1,000 old rows; half of them are not in the snapshot, so its prune deletes 500.
      const seed = partitionBatch(1000, {
        first: 100_000,
        step: 100,
        close: 1,
        snapshot: false,
        batchId: uniqueId('seed'),
      });
      const snapId = uniqueId('snapcrash');
      const snap = partitionBatch(ROWS, {
        first: 100_000,
        step: 1,
        close: 2,
        snapshot: true,
        batchId: snapId,
      });

      let server = await fx.start();
      assert.equal((await pushBatch(server.port, seed)).status, 200);
      await fx.stop('SIGTERM');

      server = await fx.start({ env: { MDS_TEST_PAUSE_BEFORE_COMMIT_MS: '60000' }, hooks: true });
      const post = new StagedPost(server.port, INGEST_PATH, snap, HEADERS);
      await post.sendUpTo(1);
      await server.waitForOutput(`${PAUSE_MARKER} ${snapId}`, 120_000);
      await fx.stop('SIGKILL');
      post.destroy();

      server = await fx.start();
      assert.equal((await batchState(server.port, snapId)).status, 404, 'the snapshot is absent');
      assert.equal(await rowCount(server.port, SNAP_SOURCE), 1000, 'no upsert and no prune survived');
      const page = await request(server.port, {
        method: 'GET',
        path: `/api/v1/etf/kline?source=${SNAP_SOURCE}&limit=1000`,
        headers: { 'q-api-key': QUERY_KEY },
      });
      const closes = new Set(
        (JSON.parse(page.body) as { data: { close: number }[] }).data.map((r) => r.close),
      );
      assert.deepEqual([...closes], [1], 'every old row keeps its old value');

      const retry = await pushBatch(server.port, snap);
      assert.match(retry.body, /"status":"accepted"/);
      assert.match(retry.body, /"pruned":500/);
      assert.equal(await rowCount(server.port, SNAP_SOURCE), ROWS);
      await fx.stop('SIGTERM');
    });
  });
}

/** The crash suites on one backend (each backend's file calls this). */
export function crashSuites(backend: Backend): void {
  batchKills(backend);
  snapshotKill(backend);
}
