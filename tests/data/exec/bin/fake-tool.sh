# shellcheck shell=sh
# Shared by the fake chef-solo, puppet and berks that tests/test-exec.c puts
# on PATH. Sourced, not run: "$0" is the fake program itself.
#
# Appends to the file named by EXEC_FAKE_LOG what the program was given:
#   program: <name>
#   cwd: <directory>
#   arg1: <first argument> ...
#   <FAKE_NOTE>           if the caller set it
#   file <path>:          for each file named in FAKE_FILES (set by the
#   <content>             caller) that exists; the content is followed by a
#   end <path>            line break, then this end line
# then prints EXEC_FAKE_<NAME>_STDOUT and EXEC_FAKE_<NAME>_STDERR (printf
# formats; NAME is the program name in capitals, "-" as "_") and exits
# with EXEC_FAKE_<NAME>_EXIT (default 0).
fake_name=$(basename "$0")
fake_var=$(printf '%s' "$fake_name" | tr 'a-z-' 'A-Z_')
{
        printf 'program: %s\n' "$fake_name"
        printf 'cwd: %s\n' "$(pwd)"
        fake_n=0
        for fake_arg in "$@"; do
                fake_n=$((fake_n + 1))
                printf 'arg%d: %s\n' "$fake_n" "$fake_arg"
        done
        if [ -n "${FAKE_NOTE-}" ]; then
                printf '%s\n' "$FAKE_NOTE"
        fi
        for fake_file in $FAKE_FILES; do
                if [ -e "$fake_file" ]; then
                        printf 'file %s:\n' "$fake_file"
                        cat "$fake_file"
                        printf '\nend %s\n' "$fake_file"
                fi
        done
} >>"${EXEC_FAKE_LOG:?EXEC_FAKE_LOG is not set}"
fake_out=
fake_err=
fake_exit=0
eval "fake_out=\${EXEC_FAKE_${fake_var}_STDOUT-}"
eval "fake_err=\${EXEC_FAKE_${fake_var}_STDERR-}"
eval "fake_exit=\${EXEC_FAKE_${fake_var}_EXIT-0}"
# shellcheck disable=SC2059 # the variables are formats on purpose
printf "$fake_out"
# shellcheck disable=SC2059
printf "$fake_err" >&2
exit "$fake_exit"
