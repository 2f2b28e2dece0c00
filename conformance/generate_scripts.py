#!/usr/bin/env python3
"""Writes scripts/*.json of the project conformance pack (run from conformance/).

The commitment hashes follow kernel spec 4.12 (checked against the spec's
`empty-object` vector below). Expected outputs are not written here: see
README.md (GAOS_CONFORMANCE_BLESS) and review them by hand.
"""
import hashlib, json, struct, os
def frame(b): return struct.pack('>I', len(b)) + b
def canon(v): return json.dumps(v, sort_keys=True, separators=(',',':'), ensure_ascii=False)
def chash(session, seat, cid, wref, salt, payload):
    pre = frame(b"gaos.commit.sha256.v1")+frame(session.encode())+frame(seat.encode())+struct.pack('>Q',cid)+struct.pack('>Q',wref)+frame(bytes.fromhex(salt))+frame(canon(payload).encode())
    return hashlib.sha256(pre).hexdigest()
assert chash("s","a",0,0,"000102030405060708090a0b0c0d0e0f",{})=="b4cbe52512f1f5bdefbd1ee40c9a3f87a44f07eb9918e0ddf12f22d644d1e831"
S="5a"*16; T="7b"*16; U="3c"*16
def script(name, desc, covers, game, kernel, steps):
    d={"format":"gaos.conformance-script","formatVersion":1,"name":name,"description":desc,"covers":covers,"game":game,"kernel":kernel,"steps":steps}
    open(f"scripts/{name}.json","w").write(json.dumps(d, indent=2)+"\n")
def sealed_kernel(sid, ticks=False):
    return {"sessionId":sid,"levelId":"auction","level":{"maxBid":100},"seed":1,"seedPolicy":"explicit","seats":["north","south"],
            "cadence":{"mode":"ticks","ticksPerSecond":1} if ticks else {"mode":"turns"}}
def commit(sid, seat, salt, bid, sub):
    return {"op":"ingest","seat":seat,"submissionId":sub,"command":{"commit":chash(sid,seat,0,0,salt,{"bid":bid})}}
def reveal(seat, salt, bid, sub, note=None):
    s={"op":"ingest","seat":seat,"submissionId":sub,"command":{"reveal":{"salt":salt,"bid":bid}}}
    if note: s["note"]=note
    return s
ADV={"op":"advance"}
# ---------------- item 1: salt book
sid="k13-salts-seats"
script("salt-reuse-across-seats","Salt book (kernel spec 4.12): both seats commit and reveal with the same salt; the second reveal in canonical input order (south) gets the one salt_reuse warning, the book keeps north as first owner; rehydrate rebuilds the same state.",
 ["salt-book","salt-reuse","warnings"],"conformance/sealed",sealed_kernel(sid),
 [commit(sid,"north",S,30,"n-c"),commit(sid,"south",S,40,"s-c"),ADV,
  reveal("north",S,30,"n-r"),reveal("south",S,40,"s-r"),{"op":"advance","note":"warnings: [south/0] only"},
  {"op":"rehydrate"},{"op":"state"}])
sid="k13-salts-mismatch"
script("salt-reuse-then-mismatch","Salt book: north reveals honestly with salt S, south reuses S with a forged bid. The salt is consulted before the hash check, so the rejection's summary carries south's salt_reuse warning; a second, honest reveal by south warns again (north stays the first owner).",
 ["salt-book","salt-reuse","commit-mismatch","warnings"],"conformance/sealed",sealed_kernel(sid),
 [commit(sid,"north",S,30,"n-c"),commit(sid,"south",S,40,"s-c"),ADV,
  reveal("north",S,30,"n-r"),reveal("south",S,99,"s-r1","forged bid"),{"op":"advance","note":"rejection of south with warnings [south/0]"},
  reveal("south",S,40,"s-r2"),{"op":"advance","note":"resolves; warnings [south/0] again"}])
sid="k13-salts-rejected-first"
script("salt-recorded-by-rejected-reveal","Salt book, ticks cadence: south alone reveals with a forged bid and a fresh salt T; the reveal is rejected but T is recorded under south. When north later reveals with T (its committed salt) north gets the warning. A rehydrate between the two advances rebuilds the book from the rejection's attemptedReveal, so the warning is the same.",
 ["salt-book","commit-mismatch","rehydrate","warnings"],"conformance/sealed",sealed_kernel(sid,True),
 [commit(sid,"north",T,10,"n-c"),commit(sid,"south",T,20,"s-c"),ADV,
  reveal("south",T,77,"s-r1","forged bid"),{"op":"advance","note":"rejection; T recorded under south"},
  {"op":"rehydrate"},
  reveal("north",T,10,"n-r"),reveal("south",T,20,"s-r2"),{"op":"advance","note":"warnings [north/0]"}])
sid="k13-salts-rehydrate"
k=sealed_kernel(sid)
pre=[commit(sid,"north",S,30,"n-c"),commit(sid,"south",S,40,"s-c"),ADV,
  reveal("north",S,30,"n-r"),reveal("south",S,99,"s-r1","forged bid"),{"op":"advance","note":"rejection with warnings [south/0]; live book: S -> north"}]
script("salt-rehydrate-after-rejection","Salt book across a crash (kernel spec 4.12, last paragraph): the log records only the rejected reveal of a mismatching resolution, so a rehydrated kernel attributes the shared salt S to south while the live one keeps north. Session 0 continues live (the next warning names south), session 1 plays the same moves but rehydrates after the rejection (the next warning names north).",
 ["salt-book","rehydrate","warnings"],"conformance/sealed",k,
 pre+[reveal("south",S,40,"s-r2"),{"op":"advance","note":"live: warnings [south/0]"},
  {"op":"session","kernel":k}]+pre+[{"op":"rehydrate","note":"book rebuilt: S -> south (attemptedReveal)"},
  reveal("south",S,40,"s-r2"),{"op":"advance","note":"rehydrated: warnings [north/0]"}])
# ---------------- item 2: timeout order
def to(tick, pid, tid="t", reason="elapsed", **extra):
    t={"timeoutId":tid,"tick":tick,"participantId":pid,"reason":reason}; t.update(extra); return t
def tstep(timeout, forced="__none__", note=None):
    s={"op":"timeout","timeout":timeout}
    if forced!="__none__": s["forcedInput"]=forced
    if note: s["note"]=note
    return s
A1={"id":"Action 1"}
ck={"sessionId":"k13-timeout-order","levelId":"two","level":{"rounds":2},"seed":0,"seedPolicy":"explicit","seats":["a","b"],"cadence":{"mode":"turns"}}
script("timeout-check-order","Timeout check order while playing (kernel spec 4.10 'Check order'), counter without a mapper: each step pairs a failure with a failure of a later check, so the first failing check decides: types, then tick, then participant, then forced input, then its seat, then commitment fields.",
 ["timeout","check-order","argument-errors"],"conformance/counter",ck,
 [tstep("t-1",A1,"(1) timeout not an object: type"),
  tstep(to(0,"a",tid=""),A1,"(1) empty timeoutId: type"),
  tstep(to(0,"a",reason=7),A1,"(1) reason not a string: type"),
  tstep(to(5,"zed",timeoutPolicyRef=""),None,"(1) empty timeoutPolicyRef before a wrong tick: type"),
  tstep(to(5,"zed"),None,"(2) wrong tick before an undeclared seat: stale_target"),
  tstep(to("0","a"),A1,"(2) string tick: stale_target"),
  tstep(to(9007199254740993,"a"),A1,"(2) unsafe tick: stale_target"),
  tstep({"timeoutId":"t","participantId":"a","reason":"elapsed"},A1,"(2) missing tick: stale_target"),
  tstep(to(0,"zed"),note="(3) undeclared seat before the missing forced input: conflict"),
  tstep(to(0,5),A1,"(3) participantId not a string: conflict"),
  {"op":"ingest","seat":"a","submissionId":"a-0","command":{"n":1}},
  tstep(to(0,"a"),A1,"(3) a has submitted: conflict"),
  tstep(to(0,"b"),note="(4) no mapper, no forced input: type"),
  tstep(to(0,"b"),"Action 1","(4) forced input not an object: type"),
  tstep(to(0,"b"),{"id":"Action 1","seat":None},"(5) seat null for a named participant: conflict"),
  tstep(to(0,None),{"id":"Action 1","seat":None},"(5) seat null for a window-wide timeout: conflict"),
  tstep(to(0,"b"),{"id":"Action 1","seat":"a"},"(5) seat of another participant: conflict"),
  tstep(to(0,None),{"id":"Action 1","seat":"b"},"(5) window-wide timeout with a seat: conflict"),
  tstep(to(0,"b"),{"id":"Action 1","reveal":None},"(6) reveal key: conflict"),
  tstep(to(0,"b",timeoutPolicyRef="host.turn-timer"),{"id":"Action 1","index":2},"valid: b times out, seat filled in, timeoutPolicyRef recorded"),
 ])
ek={"sessionId":"k13-timeout-after-end","levelId":"one","level":{"rounds":1},"seed":0,"seedPolicy":"explicit","seats":["a","b"],"cadence":{"mode":"turns"}}
script("timeout-order-after-end","Timeout check order after the game ended (kernel spec 4.10): 'the game is still playing' is the last check, so a wrong tick is stale_target, an ineligible seat or a forced seat: null is conflict, a missing forced input is a type error; only a timeout that passes every other check reports terminal. Rehydrate keeps it so.",
 ["timeout","check-order","terminal"],"conformance/counter",ek,
 [tstep(to(0,None),A1,"window-wide timeout ends the game"),
  {"op":"state"},
  tstep(to(0,"a"),A1,"wrong tick after the end: stale_target"),
  tstep(to(1,"zed"),A1,"undeclared seat after the end: conflict"),
  tstep(to(1,"a"),{"id":"Action 1","seat":None},"seat null after the end: conflict"),
  tstep(to(1,None),{"id":"Action 1","seat":"a"},"window-wide with a seat after the end: conflict"),
  tstep(to(1,"a"),note="no forced input after the end: type"),
  tstep(to(1,"a",timeoutPolicyRef=""),A1,"empty timeoutPolicyRef after the end: type"),
  tstep(to(1,"a"),A1,"valid after the end: terminal"),
  {"op":"rehydrate"},
  tstep(to(0,"b"),A1,"after rehydrate, wrong tick: stale_target"),
  tstep(to(1,"b"),A1,"after rehydrate, valid: terminal")])
hk={"sessionId":"k13-timeout-mapper","levelId":"one","level":{"handSize":1,"maxCard":9},"seed":5,"seedPolicy":"explicit","seats":["alice","bob"],"cadence":{"mode":"turns"},"timeoutToAction":True}
script("timeout-order-mapper","Timeout check order with hilo's timeout mapper (kernel spec 4.10 step 4): a supplied forced input must equal the mapping (conflict otherwise, also a non-object one); the mapper runs after the participant check; after the end the mapper comparison still comes before terminal.",
 ["timeout","check-order","timeout-mapper"],"conformance/hilo",hk,
 [tstep(to(0,"zed"),{"id":"Action 9"},"(3) undeclared seat before the mapping: conflict"),
  tstep(to(0,"alice"),{"id":"Action 1","index":1,"seat":"alice"},"(4) differs from the mapping: conflict"),
  tstep(to(0,"alice"),"card 0","(4) non-object forced input with a mapper: conflict"),
  {"op":"ingest","seat":"bob","submissionId":"bob-0","command":{"card":0}},
  tstep(to(0,"bob"),note="(3) bob has submitted, before the mapping: conflict"),
  tstep(to(0,"alice"),{"id":"Action 1","index":0,"seat":"alice"},"equal to the mapping: resolves, the one-card game ends"),
  tstep(to(1,"alice"),{"id":"Action 1","index":1,"seat":"alice"},"after the end, (4) differs from the mapping: conflict, not terminal"),
  tstep(to(1,"zed"),note="after the end, (3) undeclared seat: conflict"),
  tstep(to(0,"alice"),note="after the end, (2) wrong tick: stale_target"),
  tstep(to(1,"alice"),note="after the end, the mapping alone: terminal"),
  tstep(to(1,"alice"),{"id":"Action 1","index":0,"seat":"alice"},"after the end, equal forced input: terminal"),
 ])
# ---------------- item 3: arguments
ak={"sessionId":"k13-args","levelId":"three","level":{"rounds":3},"seed":0,"seedPolicy":"explicit","seats":["a","b"],"cadence":{"mode":"ticks","ticksPerSecond":2}}
script("arguments-unsafe-numbers","Numbers beyond the safe-integer range inside a script (SCRIPT-FORMAT.md 4): read as JavaScript reads them and refused by the kernel at their own step; the run goes on.",
 ["arguments","unsafe-integers"],"conformance/counter",ak,
 [{"op":"ingest","seat":"a","submissionId":"a-0","command":{"n":9007199254740993},"note":"command not in the value domain: invalid_submission"},
  {"op":"ingest","seat":"a","submissionId":"a-0","command":{"n":1},"revision":9007199254740993,"note":"revision (and tickId) unsafe: stale_tick"},
  {"op":"advance","target":9007199254740993,"note":"unsafe target: invalid_target"},
  tstep(to(9007199254740993,"a"),A1,"unsafe timeout tick: stale_target"),
  {"op":"extension","lane":"notes","record":{"big":9007199254740993},"note":"record outside the value domain: type"},
  {"op":"snapshot","seat":"a","after":9007199254740993,"note":"after beyond live: range"},
  {"op":"session","kernel":{**ak,"seed":9007199254740993},"note":"seed not a u32: type, no session created"},
  {"op":"session","kernel":{**ak,"seed":4294967296},"note":"seed above u32: type"},
  {"op":"ingest","seat":"a","submissionId":"a-0","command":{"n":1},"note":"the run goes on"},
  {"op":"advance"}])
ok_={"sessionId":"k13-overflow","levelId":"three","level":{"rounds":3},"seed":0,"seedPolicy":"explicit","seats":["a","b"],"cadence":{"mode":"turns"}}
script("arguments-view-out-of-domain","A view value outside the value domain (SCRIPT-FORMAT.md 4): the counter's total passes 2^53, the kernel refuses the advance with advance/invalid_view (not a reducer failure) and nothing resolves; the intents stay collected.",
 ["arguments","invalid-view"],"conformance/counter",ok_,
 [{"op":"ingest","seat":"a","submissionId":"a-0","command":{"n":9007199254740991}},
  {"op":"ingest","seat":"b","submissionId":"b-0","command":{"n":1}},
  {"op":"advance","note":"total 2^53 is not a safe integer: invalid_view"},
  {"op":"state"},
  tstep(to(0,None),{"id":"Action 1","index":-9007199254740991},"a forced input bringing the total back is fine: resolves with the two intents and the system input")])
wk={"sessionId":"k13-wrong-types","levelId":"three","level":{"rounds":3},"seed":0,"seedPolicy":"explicit","seats":["b","a"],"cadence":{"mode":"ticks","ticksPerSecond":2}}
script("arguments-wrong-types","Wrongly typed step fields are passed to the kernel as they are (SCRIPT-FORMAT.md 4): undeclared or non-string seats are range errors for observe and snapshot, snapshot with after null means 0, missing or wrongly typed ingest, advance, timeout and extension fields get the kernel's own errors.",
 ["arguments","wrong-types","observe","snapshot"],"conformance/counter",wk,
 [{"op":"observe","seat":"zed","note":"undeclared: range"},
  {"op":"observe","seat":5,"note":"not a string: range"},
  {"op":"snapshot","seat":"zed","note":"undeclared: range"},
  {"op":"snapshot","seat":None,"after":0,"note":"seat null: range"},
  {"op":"snapshot","seat":"a","after":None,"note":"after null means 0"},
  {"op":"ingest","seat":5,"submissionId":"x","command":{"n":1},"note":"seat not a string: unknown_participant"},
  {"op":"ingest","seat":"a","submissionId":7,"command":{"n":1},"note":"submissionId not a string: invalid_submission"},
  {"op":"ingest","seat":"a","submissionId":"a-0","note":"no command: invalid_submission"},
  {"op":"advance","target":"1","note":"string target: invalid_target"},
  {"op":"timeout","note":"no timeout at all: type"},
  tstep(to(0,["a"]),A1,"participantId an array: conflict"),
  {"op":"extension","lane":5,"record":{},"note":"lane not a string: type"},
  {"op":"extension","lane":"notes","note":"no record: type"},
  {"op":"ingest","seat":"a","submissionId":"a-0","command":{"n":2}},
  {"op":"advance","target":0},
  {"op":"snapshot","seat":"b","after":None}])
sk=sealed_kernel("k13-envelopes")
script("arguments-sealed-envelopes","The sealed game's mapper passes commit and reveal.salt through unchanged (SCRIPT-FORMAT.md 4), so malformed commitment envelopes are the kernel's conflict (kernel spec 4.8 step 7), not the game's illegal_command.",
 ["arguments","commit-reveal","conflict"],"conformance/sealed",sk,
 [{"op":"ingest","seat":"north","submissionId":"n-1","command":{"commit":5},"note":"hash a number: conflict"},
  {"op":"ingest","seat":"north","submissionId":"n-2","command":{"commit":"ABCD"},"note":"hash not 64 lower hex: conflict"},
  commit("k13-envelopes","north",S,30,"n-c"),commit("k13-envelopes","south",U,40,"s-c"),ADV,
  {"op":"ingest","seat":"north","submissionId":"n-r1","command":{"reveal":{"salt":7,"bid":30}},"note":"salt a number: conflict"},
  {"op":"ingest","seat":"north","submissionId":"n-r2","command":{"reveal":{"salt":"0a","bid":30}},"note":"salt shorter than 16 bytes: conflict"},
  reveal("north",S,30,"n-r"),reveal("south",U,40,"s-r"),ADV])
# ---------------- issue 28: finalize arguments, extension and finalizeRun order
fk={"sessionId":"k28-finalize","levelId":"l0","level":{"rounds":1},"seed":{"runSeed":7,"levelIndex":0},"seedPolicy":"explicit","seats":["a","b"],"cadence":{"mode":"turns"}}
def fin(note, **fields): return {"op":"finalize",**fields,"note":note}
def run(note, sessions, **fields): return {"op":"finalizeRun","sessions":sessions,**fields,"note":note}
NO={"advancePolicy":"play-all-levels"}
def play_round(prefix): return [{"op":"ingest","seat":"a","submissionId":prefix+"a","command":{"n":1}},{"op":"ingest","seat":"b","submissionId":prefix+"b","command":{"n":2}},ADV]
script("arguments-finalize","Issue 28: finalize and finalizeRun arguments are passed as they are (SCRIPT-FORMAT.md 4.1) and reach the kernel's checks in the reference's order. finalize (kernel spec 5.5): terminal first, then the projection's perm.indexOf (a perm without indexOf is a TypeError), then the artifact's validation (any other bad perm or visibility, null included: replay-format). An ended session refuses every extension as terminal before the lane is looked at (4.11). finalizeRun (5.6) checks level by level: header, seed, the level's own finalizeReplay, win-to-advance, then the next level.",
 ["arguments","finalize","finalizeRun","extension","check-order"],"conformance/counter",fk,
 [{"op":"extension","lane":5,"record":{},"note":"playing: lane not a string: type"},
  fin("playing: terminal before the perm entry \"0\"",perm=["0"]),
  fin("playing: terminal before visibility 5",perm=[0],visibility=5),
  fin("playing: terminal before a missing perm"),
  *play_round("r0-"),
  {"op":"extension","lane":5,"record":{},"note":"ended: terminal before the lane's type"},
  {"op":"extension","lane":None,"record":{},"note":"ended: terminal before a null lane"},
  {"op":"extension","lane":"","record":7,"note":"ended: terminal before an empty lane and a non-object record"},
  {"op":"extension","lane":"notes","record":{"v":9007199254740993},"note":"ended: terminal before the value domain"},
  fin("perm entry a string: replay-format",perm=["0"]),
  fin("perm entry fractional: replay-format",perm=[0.5]),
  fin("perm entry negative: replay-format",perm=[-1]),
  fin("perm entry null: replay-format",perm=[None]),
  fin("perm a string (it has an indexOf): replay-format",perm="0"),
  fin("perm null (no indexOf): type",perm=None),
  fin("no perm (undefined has no indexOf): type"),
  fin("perm an object (no indexOf): type",perm={}),
  fin("visibility null is written into the header: replay-format",perm=[0],visibility=None),
  fin("visibility a number: replay-format",perm=[0],visibility=5),
  fin("visibility an array: replay-format",perm=[0],visibility=["full"]),
  fin("valid",perm=[1,0],visibility="seat:b",label="level-0"),
  {"op":"session","kernel":{**fk,"levelId":"l1","level":{"rounds":2},"seed":{"runSeed":7,"levelIndex":1}},"note":"level 1, left playing"},
  run("level 0's perm before level 1's terminal: replay-format",[0,1],seed=7,perm=["0"],**NO),
  run("level 1 not terminal: terminal",[0,1],seed=7,perm=[0],**NO),
  run("win-to-advance: level 0 ended, not won, after its own finalize: type",[0,1],seed=7,perm=[0]),
  run("win-to-advance: level 0's perm before its win check: replay-format",[0,1],seed=7,perm=["0"]),
  run("another run seed: level 0's seed before its perm: type",[0,1],seed=8,perm=["0"],**NO),
  run("no seed: type",[0,1],perm=[0],**NO),
  run("seed a string: type",[0,1],seed="7",perm=[0],**NO),
  run("no perm: type at level 0's projection",[0],seed=7,**NO),
  run("session 0 twice: level 0's perm before level 1's seed: replay-format",[0,0],seed=7,perm=["0"],**NO),
  run("session 0 twice: level 1's seed: type",[0,0],seed=7,perm=[0],**NO),
  {"op":"session","kernel":{**fk,"sessionId":"k28-other","levelId":"l1","seed":{"runSeed":7,"levelIndex":1}},"note":"level 1 under another session id"},
  *play_round("o0-"),
  run("level 0's perm before level 1's session id: replay-format",[0,2],seed=7,perm=[-1],**NO),
  run("level 1's session id: type",[0,2],seed=7,perm=[0],**NO),
  run("one level: valid",[0],seed=7,perm=[0],label="run",**NO)])
