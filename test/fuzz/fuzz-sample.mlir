// A fixed-seed sample of the two fuzzers (see the scripts' docstrings).
// gen_attention.py: random attention programs in the spellings attn-fuse
// supports; each must fuse and match the unfused program under mlir-runner.
// mutate.py: mutants of the lit corpus; attn-opt must not crash and
// whatever it fuses must match. Larger runs: drop --count/--seed, e.g.
//   python3 test/fuzz/gen_attention.py --seed 123 --count 500 --jobs 2
//   python3 test/fuzz/mutate.py --seed 123 --count 1000 --jobs 2
//
// RUN: rm -rf %t.gen %t.mut
// RUN: %python %S/gen_attention.py --seed 1 --count 40 --attn-opt %attn_obj_root/bin/attn-opt --runner-libs %runner-libs --transform-lib %attn_src_root/test/lib/decompose-softmax.mlir --keep %t.gen | FileCheck %s --check-prefix=GEN
// RUN: %python %S/mutate.py --seed 1 --count 150 --attn-opt %attn_obj_root/bin/attn-opt --runner-libs %runner-libs --transform-lib %attn_src_root/test/lib/decompose-softmax.mlir --keep %t.mut | FileCheck %s --check-prefix=MUT

// RUN: %python %S/gen_attention.py --seed 777 --only 243 --attn-opt %attn_obj_root/bin/attn-opt --runner-libs %runner-libs --transform-lib %attn_src_root/test/lib/decompose-softmax.mlir --keep %t.gen777 | FileCheck %s --check-prefix=GEN777
// A GQA bias with a unit group dim and dynamic sizes (the dropped unit dim
// was guessed wrong once bufferized: attn-explicit-unit-drops), and the Q
// scale's f16 rounding at amplitude 1.5 (the tolerance the fold needs).
// RUN: %python %S/gen_attention.py --seed 6035 --only 115 --attn-opt %attn_obj_root/bin/attn-opt --runner-libs %runner-libs --transform-lib %attn_src_root/test/lib/decompose-softmax.mlir --keep %t.gen6035 | FileCheck %s --check-prefix=GEN6035
// RUN: %python %S/gen_attention.py --seed 5020 --only 104 --attn-opt %attn_obj_root/bin/attn-opt --runner-libs %runner-libs --transform-lib %attn_src_root/test/lib/decompose-softmax.mlir --keep %t.gen5020 | FileCheck %s --check-prefix=GEN5020
// Hostile inputs (deep chains, DAGs, extreme sizes and option values): every
// outcome a result or a located diagnostic; a crash, hang, internal or
// unlocated error fails the run.
// RUN: %python %S/hostile.py run --seed 1 --count 300 --attn-opt %attn_obj_root/bin/attn-opt --keep %t.hostile | FileCheck %s --check-prefix=HOSTILE

// GEN: gen_attention: seed=1 cases=40 ok=40
// Two attentions sharing every input but the second one's sink (a header
// with an empty argument before the fix).
// GEN777: gen_attention: seed=777 cases=1 ok=1
// GEN6035: gen_attention: seed=6035 cases=1 ok=1
// GEN5020: gen_attention: seed=5020 cases=1 ok=1
// HOSTILE: hostile: seed 1, 300 inputs
// HOSTILE-NOT: CRASH
// HOSTILE-NOT: HANG
// MUT: mutate: seed=1 mutants=150
// MUT-SAME: mismatches=0
// MUT-SAME: pipeline_errors=0 crashes=0 broken_ir=0
