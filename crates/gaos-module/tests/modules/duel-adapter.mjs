// The reference SDK's verifier-adapter shape, reusing the duel module's
// reducer: a reducer per level context, and a semantic adapter.
import duel from "./duel.mjs";

export function resolveReplayReducer(context) {
  if (context.game.id !== "test/duel" || context.level.id !== "standard") return undefined;
  return duel.reducer;
}

export function semanticAdapterForLevel(_context) {
  return { commandToAction: duel.commandToAction };
}
