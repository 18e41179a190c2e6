/* The clone3() trampolines of child-clone-vm.h, one per architecture.
 *
 * The kernel is given no stack (clone_args.stack 0), so the child starts
 * on the caller's stack pointer, and the trampoline moves it to stack_top
 * before it writes anything: the caller's frames stay as they were, and
 * the stack needs no different handling on kernels before 5.5, which took
 * clone_args.stack as the stack pointer rather than as the lowest address.
 * No signal can run a handler on the caller's stack in between: the caller
 * blocks every signal around the clone (child-launch.c). The child's other
 * registers are the caller's, its thread pointer (and so errno and the
 * stack protector's canary) the calling thread's.
 *
 * x86_64, System V: stack_top in %rdx, fn in %rcx, arg in %r8. The syscall
 * instruction takes its number in %rax and its arguments in %rdi and %rsi
 * (args and size, already there), returns in %rax and overwrites %rcx and
 * %r11, so fn moves to %r9 first. In the child (%rax 0): the stack pointer
 * becomes stack_top, %rbp 0 ends the frame chain, and fn(arg) is called with
 * the stack 16-byte aligned at the call, as the ABI wants.
 *
 * aarch64, AAPCS64: args in x0, size in x1, stack_top in x2, fn in x3, arg
 * in x4. svc #0 takes its number in x8, returns in x0 and keeps every other
 * register. In the child (x0 0): sp becomes stack_top (16-byte aligned, as
 * sp must be), the frame pointer x29 and the link register x30 are zeroed
 * to end the frame chain, and fn(arg) is called.
 *
 * Either way, should fn return, the child calls exit_group(127). */
#include "child/child-clone-vm.h"

#if CHILD_CLONE_VM

#include <sys/syscall.h>

#define CHILD_STR_(x) #x
#define CHILD_STR(x)  CHILD_STR_(x)

#if defined(__x86_64__)
#if defined(__CET__)
#define CHILD_ENDBR "endbr64\n"
#else
#define CHILD_ENDBR ""
#endif
/* clang-format off */
__asm__(".text\n"
        ".globl child_clone_vm\n"
        ".hidden child_clone_vm\n"
        ".type child_clone_vm, @function\n"
        ".p2align 4\n"
        "child_clone_vm:\n"
        ".cfi_startproc\n"
        CHILD_ENDBR
        "        movq %rcx, %r9\n"
        "        movl $" CHILD_STR(SYS_clone3) ", %eax\n"
        "        syscall\n"
        "        testq %rax, %rax\n"
        "        jz 1f\n"
        "        ret\n"
        "1:\n"
        ".cfi_undefined rip\n"
        "        movq %rdx, %rsp\n"
        "        xorl %ebp, %ebp\n"
        "        movq %r8, %rdi\n"
        "        call *%r9\n"
        "        movl $127, %edi\n"
        "        movl $" CHILD_STR(SYS_exit_group) ", %eax\n"
        "        syscall\n"
        "        hlt\n"
        ".cfi_endproc\n"
        ".size child_clone_vm, .-child_clone_vm\n");
/* clang-format on */
#elif defined(__aarch64__)
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define CHILD_BTI "hint #34\n" /* bti c */
#else
#define CHILD_BTI ""
#endif
/* clang-format off */
__asm__(".text\n"
        ".globl child_clone_vm\n"
        ".hidden child_clone_vm\n"
        ".type child_clone_vm, %function\n"
        ".p2align 2\n"
        "child_clone_vm:\n"
        ".cfi_startproc\n"
        CHILD_BTI
        "        mov x8, #" CHILD_STR(SYS_clone3) "\n"
        "        svc #0\n"
        "        cbz x0, 1f\n"
        "        ret\n"
        "1:\n"
        ".cfi_undefined x30\n"
        "        mov sp, x2\n"
        "        mov x29, #0\n"
        "        mov x30, #0\n"
        "        mov x0, x4\n"
        "        blr x3\n"
        "        mov x0, #127\n"
        "        mov x8, #" CHILD_STR(SYS_exit_group) "\n"
        "        svc #0\n"
        "        brk #0\n"
        ".cfi_endproc\n"
        ".size child_clone_vm, .-child_clone_vm\n");
/* clang-format on */
#endif

#endif
