import fs from 'node:fs';
import net from 'node:net';
import { CFG, INGEST_KEY, QUERY_KEY } from '../context.js';
import { code, tradingDays } from '../data.js';
import { AUTH } from '../measure.js';
import { processTree, type Server } from '../proc.js';
import { batch, etfBar } from '../../test/helpers/batches.js';

/**
 * Parts of the isolation phase (freeze.ts) from issue 52: MCP batches, a frozen SQLite writer and
 * an export under steady ingest. Each resolves with its outcome as text, for the phase's table.
 */

const MCP_HEADERS = {
  ...AUTH,
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** A JSON-RPC batch of `n` query calls, one code each (200 rows: about 13 MB answered). */
function mcpBody(n: number): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: {
        name: 'query',
        arguments: { dataset: 'etf_daily', filters: { code: code(i % CFG.codes) }, limit: 200 },
      },
    })),
  );
}

const counts = (statuses: readonly (number | string)[]): string => {
  const m = new Map<number | string, number>();
  for (const s of statuses) m.set(s, (m.get(s) ?? 0) + 1);
  return [...m].map(([s, k]) => `${k}× ${s}`).join(', ');
};

/**
 * A few tools/list on fresh connections, so every worker has built its MCP endpoint (the SDK and
 * the tools' validators, loaded at a process's first /mcp request) before a part is measured.
 */
export async function warmMcp(svc: Server): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  for (let i = 0; i < 8; i++) {
    const res = await fetch(`${svc.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, connection: 'close' },
      body,
    });
    await res.arrayBuffer();
  }
}

/** `n` batches of 100 query calls at once, read as they come: statuses and the slowest. */
export async function mcpBatches(svc: Server, n: number): Promise<string> {
  const body = mcpBody(100);
  const r = await Promise.all(
    Array.from({ length: n }, async () => {
      const t = performance.now();
      const res = await fetch(`${svc.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body });
      await res.arrayBuffer();
      return { status: res.status, ms: performance.now() - t };
    }),
  );
  const slowest = Math.max(...r.map((x) => x.ms));
  return `${counts(r.map((x) => x.status))}, slowest ${(slowest / 1000).toFixed(1)} s`;
}

/** `n` batches of 100 query calls whose clients read the status line and then nothing, for `forMs`. */
export async function unreadMcpBatches(svc: Server, n: number, forMs: number): Promise<string> {
  const port = Number(new URL(svc.url).port);
  const body = mcpBody(100);
  const statuses = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<string>((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port });
          let head = '';
          socket.on('error', () => {});
          socket.write(
            `POST /mcp HTTP/1.1\r\nHost: x\r\nQ-API-KEY: ${QUERY_KEY}\r\ncontent-type: application/json\r\n` +
              `accept: application/json, text/event-stream\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
          );
          socket.on('data', (d: Buffer) => {
            if (head.length < 12) head += d.toString('latin1', 0, 12);
            socket.pause();
          });
          setTimeout(() => {
            socket.destroy();
            resolve(head.slice(9, 12) || 'none');
          }, forMs);
        }),
    ),
  );
  return counts(statuses);
}

/** Pushes a batch of 10 records into another partition every `everyMs` until stopped. */
function steadyIngest(svc: Server, everyMs: number): { stop(): Promise<string> } {
  const days = tradingDays(400, '2030-01-01');
  const answers: Promise<{ status: number; ms: number }>[] = [];
  let n = 0;
  const push = (): void => {
    const rows = Array.from({ length: 10 }, (_, i) =>
      etfBar(code(i), days[n % days.length] as string, { source: 'bench-steady', close: 1 + (n % 5) }),
    );
    n++;
    const t = performance.now();
    answers.push(
      fetch(`${svc.url}/api/v1/upstream/ingest/batches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'UP-API-KEY': INGEST_KEY },
        body: JSON.stringify(batch('etf_daily', rows, { source: 'bench-steady' })),
      }).then(
        async (r) => {
          await r.arrayBuffer();
          return { status: r.status, ms: performance.now() - t };
        },
        () => ({ status: 0, ms: performance.now() - t }),
      ),
    );
  };
  push();
  const timer = setInterval(push, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      const r = await Promise.all(answers);
      const slowest = Math.max(0, ...r.map((x) => x.ms));
      return `pushes ${counts(r.map((x) => x.status))}, slowest answered in ${(slowest / 1000).toFixed(1)} s`;
    },
  };
}

/**
 * An export of about `rows` rows read slowly (a 40 ms pause after every piece) while a batch of
 * 10 records lands in another partition every 2 s: whether it ended whole.
 */
export async function exportUnderIngest(svc: Server, rows: number): Promise<string> {
  const days = tradingDays(CFG.days);
  const span = Math.min(days.length, Math.ceil(rows / CFG.codes));
  const path = `/api/v1/etf/kline?format=csv&source=bench&date_from=${days[days.length - span]}`;
  const ingest = steadyIngest(svc, 2000);
  const t = performance.now();
  let lines = 0;
  let complete = false;
  let status = 0;
  try {
    const res = await fetch(svc.url + path, { headers: AUTH });
    status = res.status;
    for await (const chunk of res.body ?? []) {
      for (const b of chunk as Uint8Array) if (b === 10) lines++;
      await new Promise((r) => setTimeout(r, 40));
    }
    complete = true;
  } catch {
    complete = false;
  }
  const pushes = await ingest.stop();
  const s = ((performance.now() - t) / 1000).toFixed(1);
  return `export ${status} ${complete ? 'complete' : 'CUT'}, ${Math.max(0, lines - 1)} rows in ${s} s; ${pushes}`;
}

/** The SQLite cluster's writer process (a child of the supervisor running writer-process). */
function writerPid(svc: Server): number | null {
  for (const pid of processTree(svc.pid)) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('writer-process')) return pid;
    } catch {
      // ended
    }
  }
  return null;
}

/**
 * The writer frozen (SIGSTOP) for `forMs` while a batch of 10 records is pushed every 2 s: each
 * answered within MDS_WRITER_HANG_MS and a ping, 503 while no writer runs, then 200 again.
 */
export async function frozenWriter(svc: Server, forMs: number): Promise<string> {
  const pid = writerPid(svc);
  if (pid === null) return 'no writer process (PostgreSQL, or one process): skipped';
  const ingest = steadyIngest(svc, 2000);
  process.kill(pid, 'SIGSTOP');
  await new Promise((r) => setTimeout(r, forMs));
  // Still the service's writer (not killed as hung): let it go on.
  const now = writerPid(svc);
  if (now === pid) process.kill(pid, 'SIGCONT');
  const replaced = now !== pid;
  return `writer ${pid} frozen ${forMs / 1000} s, ${replaced ? 'replaced' : 'NOT replaced'}; ${await ingest.stop()}`;
}
