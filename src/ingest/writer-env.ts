/**
 * What a SQLite cluster's primary, its workers and its writer process agree on (kept apart from
 * ingest-pool.ts, so that the primary, which never loads the service, loads only this).
 */

/**
 * Set by a SQLite cluster's primary for its workers and its writer: the Unix socket of the one
 * writer process (writer-process.ts), to which the workers hand every batch (remote-ingest.ts).
 * Not an operator's setting.
 */
export const WRITER_SOCKET_ENV = 'MDS_WRITER_SOCKET';

export function writerSocket(): string | null {
  return process.env[WRITER_SOCKET_ENV] || null;
}
