// Types of simhash-pg (CommonJS entry point; simhash-pg.d.mts is the ESM one).
import type { ClientBase } from 'pg';

/** The OIDs register() found in the connected database. */
export interface SimhashOids {
  simhash64: number;
  simhash64_array: number;
  distance: number;
}

/**
 * Looks up the extension's type OIDs in the connected database and sets the
 * parsers on this client: simhash64 -> bigint, simhash64[] -> (bigint | null)[],
 * simhash_distance -> number.  Rejects when the extension is not installed.
 */
export function register(client: ClientBase): Promise<SimhashOids>;

/**
 * A fingerprint (bigint or number in 0 .. 2**64-1) as simhash64's text form,
 * 16 hex digits, to pass as a query parameter; RangeError outside the range.
 */
export function toSimhash64(value: bigint | number): string;

/** simhash64's text form (16 hex digits) -> bigint. */
export function parseSimhash64(text: string): bigint;

/** The text form of a one-dimensional simhash64[] -> array of bigint (null for NULL). */
export function parseSimhash64Array(text: string): (bigint | null)[];
