export const SEATS = ["left", "right"];
