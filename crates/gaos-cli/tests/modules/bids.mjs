// js/bids: the example duel (examples/duel) as a game module. Two seats
// bid in secret each round from a shrinking budget; the higher bid wins
// the round. A seat's budget is in its own view only (viewFor).
const SEATS = ["red", "blue"];

function ended(state) {
  return state.history.length >= state.rounds;
}

function view(state) {
  const wins = { red: 0, blue: 0 };
  for (const round of state.history) if (round.winner) wins[round.winner] += 1;
  const result = {
    status: ended(state) ? "ended" : "playing",
    participation: { mode: "simultaneous", seats: SEATS },
    round: state.history.length,
    rounds: state.rounds,
    wins,
    history: state.history,
  };
  if (ended(state)) {
    const ranking = SEATS.map((seat) => ({ seat, score: wins[seat] }))
      .sort((a, b) => b.score - a.score || (a.seat < b.seat ? -1 : 1))
      .map((entry, _, all) => ({ ...entry, rank: 1 + all.filter((o) => o.score > entry.score).length }));
    result.outcome = { kind: "decided", ranking };
  }
  return result;
}

const reducer = {
  init(level, _seed) {
    return { rounds: level.rounds, budgets: { red: level.budget, blue: level.budget }, history: [] };
  },
  advance(state, inputs) {
    if (inputs.length !== 2) throw new Error(`a round needs one bid from each seat, got ${inputs.length}`);
    const bids = {};
    for (const input of inputs) bids[input.seat] = input.payload.points;
    for (const seat of SEATS) state.budgets[seat] -= bids[seat];
    const winner = bids.red === bids.blue ? null : bids.red > bids.blue ? "red" : "blue";
    state.history.push({ red: bids.red, blue: bids.blue, winner });
    return state;
  },
  view,
  viewFor(state, seat) {
    return { ...view(state), seat, budget: state.budgets[seat] };
  },
  validateCommand(state, seat, action) {
    const points = action.payload && action.payload.points;
    if (!Number.isInteger(points) || points < 0 || points > state.budgets[seat]) {
      throw new RangeError(`bid an integer from 0 to ${state.budgets[seat]} (your budget)`);
    }
  },
  replayMetrics: (state) => ({ actionsUsed: 2 * state.history.length }),
};

export default {
  game: { id: "js/bids", version: "1", adapter: { id: "js/bids/reducer", version: "1" } },
  description: "Two seats bid in secret from a shrinking budget each round; the higher bid wins the round.",
  seats: SEATS,
  levels: [{ id: "default", level: { rounds: 3, budget: 10 } }],
  reducer,
  commandToAction: (command, ctx) => ({ id: "Action 1", payload: { points: command.bid }, seat: ctx.participantId }),
  legalActions: (view) => (view.status === "playing" ? Array.from({ length: view.budget + 1 }, (_, bid) => ({ bid })) : []),
};
