// simhash-pg's ESM entry point: the CommonJS module's exports (one copy of
// the code, so both entry points hand out the same functions).
import cjs from './simhash-pg.js';

export const { register, toSimhash64, parseSimhash64, parseSimhash64Array } = cjs;
export default cjs;
