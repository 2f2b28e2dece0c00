// View fragments and window rules shared by the conformance games
// (GAMES.md conventions, kernel.md §2.1 and §2.3).

/** `participation` of a window every listed seat acts in. */
export function simultaneous(seats) {
  return { mode: "simultaneous", seats: [...seats] };
}

/** The outcome of a game still being played. */
export function ongoing() {
  return { kind: "ongoing" };
}

/**
 * A decided outcome ranked by score: entries by score descending, then seat id
 * ascending (seat ids are ASCII, so `<` is code-point order); a seat's rank is
 * 1 + the number of seats with a strictly higher score.
 */
export function decidedByScore(scores) {
  const entries = Object.entries(scores);
  const ranking = entries.map(([seat, score]) => ({
    seat,
    rank: 1 + entries.filter(([, other]) => other > score).length,
    score,
  }));
  ranking.sort((a, b) => b.score - a.score || (a.seat < b.seat ? -1 : a.seat > b.seat ? 1 : 0));
  return { kind: "decided", ranking };
}

/** The seats a view says act in its window, read as the kernel reads them. */
export function windowSeats(view) {
  const participation = view.participation;
  if (participation?.mode === "sequential") {
    return typeof participation.activeSeat === "string" ? [participation.activeSeat] : [];
  }
  if (participation?.mode === "simultaneous") {
    return Array.isArray(participation.seats) ? participation.seats.filter((s) => typeof s === "string") : [];
  }
  return typeof view.activeSeat === "string" ? [view.activeSeat] : [];
}

/** True when the game is being played and `seat` acts in the open window. */
export function canAct(view, seat) {
  return view.status === "playing" && windowSeats(view).includes(seat);
}
