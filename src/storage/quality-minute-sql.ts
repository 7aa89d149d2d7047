import { BLOCK_COUNT, type Dataset } from '../catalog/catalog.js';
import { ident, join, raw, sql, type Sql } from './sql.js';
import type { MinuteQualityQuery } from './store.js';

/**
 * The minute quality report's one statement over the block table (query/minute-quality.ts):
 * its codes, each with the span, days, blocks and bars the report covers, paged by code. One
 * row per code leaves the database; the page's blocks are then read as any query's.
 */

function blockTable(d: Dataset): Dataset {
  if (!d.blocks) throw new Error(`${d.name} is not stored as bar blocks`);
  return d.blocks.stored;
}

function conditions(mq: MinuteQualityQuery): Sql {
  const b = mq.dataset.blocks;
  if (!b) throw new Error(`${mq.dataset.name} is not stored as bar blocks`);
  const parts: Sql[] = [];
  if (mq.code !== null) parts.push(sql`${ident(b.code.name)} = ${mq.code}`);
  if (mq.source !== null) parts.push(sql`${ident(b.source.name)} = ${mq.source}`);
  if (mq.dateFrom !== null) parts.push(sql`${ident(b.date.name)} >= ${mq.dateFrom}`);
  if (mq.dateTo !== null) parts.push(sql`${ident(b.date.name)} <= ${mq.dateTo}`);
  return parts.length ? sql` WHERE ${join(parts, ' AND ')}` : raw('');
}

/** The codes of one page, ordered by code: first and last date, distinct days, blocks, bars. */
export function minuteCodesSql(mq: MinuteQualityQuery, limit: number, offset: number): Sql {
  const b = mq.dataset.blocks;
  if (!b) throw new Error(`${mq.dataset.name} is not stored as bar blocks`);
  const code = ident(b.code.name);
  const date = ident(b.date.name);
  const dir = raw(mq.order === 'desc' ? 'DESC' : 'ASC');
  return sql`SELECT ${code} AS code, MIN(${date}) AS first_date, MAX(${date}) AS last_date,
    COUNT(DISTINCT ${date}) AS days, COUNT(*) AS blocks, SUM(${ident(BLOCK_COUNT)}) AS bars
    FROM ${ident(blockTable(mq.dataset).name)}${conditions(mq)}
    GROUP BY ${code} ORDER BY ${code} ${dir} LIMIT ${limit} OFFSET ${offset}`;
}

/** How many codes the report has (its meta.total). */
export function minuteCodeCountSql(mq: MinuteQualityQuery): Sql {
  const b = mq.dataset.blocks;
  if (!b) throw new Error(`${mq.dataset.name} is not stored as bar blocks`);
  return sql`SELECT COUNT(DISTINCT ${ident(b.code.name)}) AS n FROM ${ident(blockTable(mq.dataset).name)}${conditions(mq)}`;
}
