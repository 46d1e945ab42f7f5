# Shellwright shell integration for fish (run with --init-command, after the user's config). Reports
# prompts (OSC 133 A/B), the start of a command's output (C), its exit status (D), its command line
# (OSC 633 E) and the working directory (OSC 7, OSC 633 P;Cwd) through fish's own events
# (fish_preexec, fish_postexec, fish_prompt), keeping the user's prompt working.

# Prints $argv[1] in OSC 633 value escaping: \\ for a backslash, \xAB for ';' and controls. Each
# step reads its input as one argument (string collect keeps newlines from splitting it).
function __sw_escape
    set -l v $argv[1]
    test -n "$v"; or return
    set v (string replace -a -- '\\' '\\\\' $v | string collect)
    set v (string replace -a -- ';' '\\x3b' $v | string collect)
    set v (string replace -a -- \n '\\x0a' $v | string collect)
    set v (string replace -a -- \r '\\x0d' $v | string collect)
    set v (string replace -a -- \e '\\x1b' $v | string collect)
    set v (string replace -a -- \a '\\x07' $v | string collect)
    printf '%s' $v
end

function __sw_status
    return $argv[1]
end

function __sw_postexec --on-event fish_postexec
    printf '\e]133;D;%s\a' $status
end

function __sw_preexec --on-event fish_preexec
    printf '\e]633;E;%s\a\e]133;C\a' (__sw_escape $argv[1])
end

function __sw_cwd --on-event fish_prompt
    printf '\e]7;file://%s%s\a\e]633;P;Cwd=%s\a' $hostname $PWD (__sw_escape $PWD)
end

# The user's prompt, wrapped in A/B marks, with the status it reads left as the command's.
functions --copy fish_prompt __sw_user_prompt
function fish_prompt
    set -l last $status
    printf '\e]133;A\a'
    __sw_status $last
    __sw_user_prompt
    printf '\e]133;B\a'
end
