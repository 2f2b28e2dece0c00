const seed = Date.now();
export default { seed };
