export const reducer = {};
