// Types of simhash-pg's ESM entry point: those of the CommonJS one
// (simhash-pg.d.ts), as named exports and as the default export.
import * as simhash from './simhash-pg.js';

export { register, toSimhash64, parseSimhash64, parseSimhash64Array } from './simhash-pg.js';
export type { SimhashOids } from './simhash-pg.js';
export default simhash;
