// The reference SDK's verifier-adapter shape for the bids game: a reducer per
// level, and the semantic adapter that re-maps recorded commands.
import bids from "./bids.mjs";

export function resolveReplayReducer(context) {
  return context.game.id === bids.game.id ? bids.reducer : undefined;
}

export function semanticAdapterForLevel(_context) {
  return { commandToAction: bids.commandToAction };
}
