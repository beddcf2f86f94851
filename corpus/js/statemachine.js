// A small state machine driven by a string.
const transitions = {
  idle: { start: "running" },
  running: { pause: "paused", stop: "idle" },
  paused: { resume: "running", stop: "idle" },
};

function step(state, event) {
  const next = transitions[state][event];
  if (next === undefined) {
    return state;
  }
  return next;
}

function run(events) {
  let state = "idle";
  const seen = [];
  for (const e of events.split(" ")) {
    state = step(state, e);
    seen.push(state);
  }
  return seen;
}

const trace = run("start pause resume bogus stop");
console.log(trace.join(">"));
