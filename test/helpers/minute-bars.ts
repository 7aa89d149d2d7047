import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { hhmm } from '../../src/ingest/minute-bars.js';
import { get, json, type Json } from './harness.js';

/** Minute bars for tests (issue 30): a day's 240 bars of one code, deterministic, with 2-decimal prices. */

/** The end minutes of an A-share day, HH:MM: 09:31–11:30 and 13:01–15:00. */
export function sessionMinutes(): string[] {
  const out: string[] = [];
  for (const [from, to] of [
    [570, 690],
    [780, 900],
  ] as const) {
    for (let m = from + 1; m <= to; m++) out.push(hhmm(m));
  }
  return out;
}

/** `code`'s 240 bars of `date` from `source`: a walk from `base`, more volume at the open and the close. */
export function dayBars(code: string, date: string, base = 10, source = 'eastmoney') {
  let seed = [...`${code}${date}`].reduce((s, c) => (s * 31 + c.charCodeAt(0)) >>> 0, 7);
  const rand = (): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  const cents = (x: number): number => Math.round(x * 100) / 100;
  let close = base;
  return sessionMinutes().map((hm, i) => {
    const open = close;
    close = cents(Math.max(0.01, open + (rand() - 0.5) * 0.1));
    const high = cents(Math.max(open, close) + rand() * 0.03);
    const low = cents(Math.max(0.01, Math.min(open, close) - rand() * 0.03));
    const shape = 1 + (3 * Math.abs(i - 119.5) ** 2) / 119.5 ** 2;
    const volume = Math.round(rand() * 1000 * shape + 1) * 100;
    return {
      symbol: code,
      date,
      time: `${date}T${hm}:00+08:00`,
      open,
      high,
      low,
      close,
      volume,
      amount: cents((volume * (open + close)) / 2),
      source,
    };
  });
}

/** Each query of `cases` (after `url`) is a 400 / 4001 naming its parameter. */
export async function expectParameterErrors(
  app: FastifyInstance,
  url: string,
  cases: readonly (readonly [query: string, parameter: string])[],
): Promise<void> {
  for (const [q, parameter] of cases) {
    const res = await get(app, `${url}${q}`);
    assert.equal(res.statusCode, 400, res.body);
    const body = json(res);
    assert.equal(body.code, 4001, q);
    assert.equal(body.parameter, parameter, q);
  }
}

/** Reads of one endpoint: a 200's body, its rows, a 400's body. `app`: the harness's, once started. */
export function endpointReads(app: () => FastifyInstance, url: string) {
  const answer = async (query: string, status: number): Promise<Json> => {
    const res = await get(app(), `${url}?${query}`);
    assert.equal(res.statusCode, status, res.body);
    return json(res);
  };
  const page = (query: string): Promise<Json> => answer(query, 200);
  return {
    page,
    rows: async (query: string): Promise<Json[]> => (await page(query)).data as Json[],
    error: (query: string): Promise<Json> => answer(query, 400),
  };
}
