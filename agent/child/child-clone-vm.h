/* clone3() with CLONE_VM for child-launch.c: the child starts on a stack of
 * its own, in the caller's memory, and runs one function there, as glibc's
 * posix_spawn() does. A raw syscall() cannot do it: the child would return
 * from syscall() into the caller's frames, on the caller's stack, which the
 * caller still needs when it resumes. So a few lines of assembly per
 * architecture make the system call and, in the child only, move to the new
 * stack before any C code runs (child-clone-vm.c).
 *
 * CHILD_CLONE_VM is 1 where this build has that trampoline (x86_64 and
 * aarch64, Debian's main architectures for VM images) and 0 elsewhere, and
 * also 0 under AddressSanitizer: ASan keeps a shadow of every stack and
 * knows only the threads it saw start, so a child running instrumented
 * code on a stack of its own, in the parent's memory, would leave the
 * parent's shadow poisoned. Where it is 0, child-launch.c starts the child
 * as a fork. */
#pragma once

#include <stddef.h>

#include "util/macro.h"

#if (defined(__x86_64__) || defined(__aarch64__)) && !ASAN_BUILD
#define CHILD_CLONE_VM 1
#else
#define CHILD_CLONE_VM 0
#endif

struct clone_args;

#if CHILD_CLONE_VM
/* clone3(args, size) (args->flags should hold CLONE_VM | CLONE_VFORK and
 * args->stack be 0: see child-clone-vm.c). In the parent: the child's pid,
 * or a negative errno (errno itself is left alone). In the child: the
 * stack pointer moves to stack_top (16-byte aligned, the highest address
 * of the child's stack), fn(arg) runs there, and the child exits with
 * status 127 should fn return. */
long child_clone_vm(struct clone_args *args, size_t size, void *stack_top, void (*fn)(void *),
                    void *arg);
#endif
