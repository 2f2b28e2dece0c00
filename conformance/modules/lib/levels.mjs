// Level checks: a level the game cannot play is refused at `init`, with the
// field and the accepted range in the message.

/** `level[key]` as an integer in `min..=max`. */
export function levelInteger(level, key, game, min, max) {
  if (level === null || typeof level !== "object" || Array.isArray(level)) {
    throw new TypeError(`${game}: the level must be an object`);
  }
  const value = level[key];
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${game}: level \`${key}\` must be an integer in ${min}..=${max}, found ${JSON.stringify(value)}`);
  }
  return value;
}
