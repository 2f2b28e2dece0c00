// A two-seat game with hidden information: each round both seats pick a
// card from their own hand at once; the higher card scores. A seat sees
// only its own hand (viewFor), and validateCommand refuses cards it lacks.
const SEATS = ["east", "west"];

function deal(seed, size) {
  // A u32 LCG: randomness comes only from the seed.
  let s = seed >>> 0;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
  const hands = {};
  for (const seat of SEATS) hands[seat] = Array.from({ length: size }, () => 1 + (next() % 9));
  return hands;
}

function status(state) {
  return state.round >= state.rounds ? "ended" : "playing";
}

function ranking(state) {
  return SEATS.map((seat) => ({ seat, score: state.score[seat] }))
    .sort((a, b) => b.score - a.score || (a.seat < b.seat ? -1 : 1))
    .map((entry, _, all) => ({ ...entry, rank: 1 + all.filter((o) => o.score > entry.score).length }));
}

const reducer = {
  init(level, seed) {
    return { rounds: level.rounds, round: 0, hands: deal(seed, level.rounds), score: { east: 0, west: 0 }, last: null, actionsUsed: 0 };
  },
  advance(state, inputs) {
    if (inputs.length !== 2) throw new Error(`a round needs both seats, got ${inputs.length} inputs`);
    const played = {};
    for (const input of inputs) {
      played[input.seat] = state.hands[input.seat].splice(input.index, 1)[0];
    }
    if (played.east !== played.west) state.score[played.east > played.west ? "east" : "west"] += 1;
    state.last = played;
    state.round += 1;
    state.actionsUsed += inputs.length;
    return state;
  },
  view(state) {
    const view = {
      status: status(state),
      participation: { mode: "simultaneous", seats: SEATS },
      round: state.round,
      score: state.score,
      last: state.last,
      handSizes: { east: state.hands.east.length, west: state.hands.west.length },
    };
    if (status(state) === "ended") view.outcome = { kind: "decided", ranking: ranking(state) };
    return view;
  },
  viewFor(state, seat) {
    return { ...reducer.view(state), seat, hand: state.hands[seat] };
  },
  validateCommand(state, seat, action) {
    const hand = state.hands[seat];
    if (!Number.isInteger(action.index) || action.index < 0 || action.index >= hand.length) {
      throw new RangeError(`${seat} has no card at position ${action.index} (hand of ${hand.length})`);
    }
  },
  replayMetrics: (state) => ({ actionsUsed: state.actionsUsed }),
};

export default {
  game: { id: "test/duel", version: "1", adapter: { id: "test/duel/reducer", version: "1.0.0" } },
  description: "Two seats play a hidden card each round; the higher card scores.",
  seats: SEATS,
  levels: [{ id: "standard", version: 1, level: { rounds: 3 } }],
  reducer,
  commandToAction: (command, ctx) => ({ id: "Action 1", index: command.card, seat: ctx.participantId }),
  timeoutToAction: (ctx) => ({ id: "Action 1", index: 0, seat: ctx.participantId }),
  legalActions: (view) => view.hand.map((_, card) => ({ card })),
};
