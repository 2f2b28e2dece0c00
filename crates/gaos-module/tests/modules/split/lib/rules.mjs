import { SEATS } from "../seats.mjs";
export const rules = {
  init: (level) => ({ goal: level.goal, sum: 0, actionsUsed: 0 }),
  advance(state, inputs) {
    for (const input of inputs) state.sum += input.index;
    state.actionsUsed += inputs.length;
    return state;
  },
  view: (state) => ({
    status: state.sum >= state.goal ? "won" : "playing",
    ...(state.sum >= state.goal ? { stars: 1 } : {}),
    participation: { mode: "simultaneous", seats: SEATS },
    sum: state.sum,
    hud: { actionsUsed: state.actionsUsed },
  }),
};
