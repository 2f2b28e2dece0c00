// A default-export resolver without a semantic adapter.
import duel from "./duel.mjs";

export default function (context) {
  return context.level.level.rounds > 0 ? duel.reducer : undefined;
}
