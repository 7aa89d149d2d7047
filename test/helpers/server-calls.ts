import assert from 'node:assert/strict';
import { ADMIN_TOKEN, INGEST_KEY, QUERY_KEY } from './harness.js';
import { request, type RawResponse } from './server-process.js';
import { batch, etfBar, uniqueId } from './batches.js';

/** Calls on a server listening on a loopback port (a child process or an in-process listener). */

export function pushBatch(port: number, body: Buffer | string, key = INGEST_KEY): Promise<RawResponse> {
  return request(port, {
    method: 'POST',
    path: '/api/v1/upstream/ingest/batches',
    headers: { 'content-type': 'application/json', 'up-api-key': key },
    body,
  });
}

export interface BatchState {
  status: number;
  code: number;
  batchStatus: string | null;
  accepted: number | null;
}

export async function batchState(port: number, batchId: string): Promise<BatchState> {
  const r = await request(port, {
    method: 'GET',
    path: `/api/v1/upstream/ingest/batches/${encodeURIComponent(batchId)}`,
    headers: { 'up-api-key': INGEST_KEY },
  });
  const b = JSON.parse(r.body) as { code: number; status?: string; accepted?: number };
  return { status: r.status, code: b.code, batchStatus: b.status ?? null, accepted: b.accepted ?? null };
}

/** meta.total of etf_daily rows of one source (the kline endpoint's `source` filter). */
export async function rowCount(port: number, source: string): Promise<number> {
  const r = await request(port, {
    method: 'GET',
    path: `/api/v1/etf/kline?source=${encodeURIComponent(source)}&limit=1`,
    headers: { 'q-api-key': QUERY_KEY },
  });
  if (r.status !== 200) throw new Error(`row count: ${r.status} ${r.body}`);
  return (JSON.parse(r.body) as { meta: { total: number } }).meta.total;
}

type Json = Record<string, unknown>;

/** A batch of `rows` etf_daily bars of one day and source (codes 600000…); its answer. */
export function pushBars(
  port: number,
  source: string,
  rows = 50,
  batchId = uniqueId('ow'),
): Promise<{ status: number; body: Json; retryAfter: string | undefined; batchId: string }> {
  const body = JSON.stringify(
    batch(
      'etf_daily',
      Array.from({ length: rows }, (_, i) => etfBar(String(600000 + i), '2024-09-02', { source })),
      { batchId },
    ),
  );
  return pushBatch(port, body).then((r) => ({
    status: r.status,
    body: JSON.parse(r.body) as Json,
    retryAfter: r.headers['retry-after'] as string | undefined,
    batchId,
  }));
}

/** An admin API call with the admin token; its `data` (fails the test on an error answer). */
export async function adminCall(base: string, method: string, p: string, body?: Json): Promise<Json> {
  const res = await fetch(new URL(p, base), {
    method,
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  assert.ok(res.status < 300, `${method} ${p}: ${res.status}`);
  return ((await res.json()) as { data: Json }).data;
}

/** Requests a key has made today, as the admin API's key list says. */
export async function usageToday(base: string, id: unknown): Promise<number> {
  const keys = (await adminCall(base, 'GET', '/admin/api/keys')) as unknown as Json[];
  return (keys.find((k) => k.id === id)!.usage as Json).today as number;
}
