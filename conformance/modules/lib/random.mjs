// Seeded generators the conformance games draw from (GAMES.md, kernel.md §2.4).
// Every step is u32 arithmetic: `Math.imul` wraps the product and `>>> 0`
// brings the sum back to an unsigned 32-bit value, so the draws equal the
// reference's on every engine.

/** The hilo dealer: `s = s × 1664525 + 1013904223 (mod 2^32)`, returning the new `s`. */
export function lcg(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s;
  };
}

/** mulberry32: each call returns the next draw in [0, 1). */
export function mulberry32(seed) {
  let v = seed >>> 0;
  return () => {
    v = (v + 0x6d2b79f5) >>> 0;
    let m = Math.imul(v ^ (v >>> 15), 1 | v);
    m = (m + Math.imul(m ^ (m >>> 7), 61 | m)) ^ m;
    return ((m ^ (m >>> 14)) >>> 0) / 4294967296;
  };
}
