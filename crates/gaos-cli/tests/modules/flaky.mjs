// A one-seat module whose views depend on calls other than the reducer's:
// every legalActions call bumps a module-level counter its view shows. A
// live session calls legalActions for every envelope; re-simulating its
// replay (a verifier, a restart) does not, so the views differ and so do
// the kernel's checkpoint digests. Commands: {"end": true} ends the game,
// anything else is one step.
let listed = 0;

export default {
  game: { id: "test/flaky", version: "1", adapter: { id: "test/flaky/reducer", version: "1" } },
  description: "Views that differ on re-simulation, on purpose.",
  seats: ["solo"],
  levels: [{ id: "default", level: {} }],
  reducer: {
    init: () => ({ steps: 0, ended: false }),
    advance(state, inputs) {
      for (const input of inputs) if (input.payload?.end === true) state.ended = true;
      state.steps += 1;
      return state;
    },
    view(state) {
      const view = { status: state.ended ? "ended" : "playing", steps: state.steps, listed, hud: { actionsUsed: state.steps } };
      if (state.ended) view.outcome = { kind: "decided", ranking: [{ seat: "solo", rank: 1, score: state.steps }] };
      return view;
    },
  },
  commandToAction: (command, ctx) => ({ id: "Action 1", seat: ctx.participantId, payload: command }),
  legalActions(view) {
    listed += 1;
    return view.status === "playing" ? [{ end: true }, {}] : [];
  },
};
