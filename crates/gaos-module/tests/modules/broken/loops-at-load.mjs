// The top level never finishes.
while (true) {}
export default {};
