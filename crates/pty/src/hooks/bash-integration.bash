# Shellwright shell integration for bash ≥ 4.4 (appended to a generated rcfile after the user's own
# startup files). Reports prompts (OSC 133 A/B), the start of a command's output (C), its exit
# status (D), its command line (OSC 633 E) and the working directory (OSC 7, OSC 633 P;Cwd), while
# keeping the user's PS1, PS0 and PROMPT_COMMAND (string or array) working. Older bash has no PS0,
# so it gets no hooks and the prompt-detection fallback applies.
if (( BASH_VERSINFO[0] > 4 || (BASH_VERSINFO[0] == 4 && BASH_VERSINFO[1] >= 4) )); then

# Sets __sw_escaped to $1 in OSC 633 value escaping: \\ for a backslash, \xAB for ';' and controls.
__sw_escape() {
  local v=$1
  v=${v//\\/\\\\}; v=${v//;/\\x3b}; v=${v//$'\n'/\\x0a}; v=${v//$'\r'/\\x0d}
  v=${v//$'\e'/\\x1b}; v=${v//$'\a'/\\x07}
  __sw_escaped=$v
}

# First in PROMPT_COMMAND: reports the finished command's status and the cwd, remembers the history
# number, and hands the status on unchanged to the user's own PROMPT_COMMAND.
__sw_precmd() {
  local status=$?
  __sw_escape "$PWD"
  printf '\e]133;D;%s\a\e]7;file://%s%s\a\e]633;P;Cwd=%s\a' "$status" "${HOSTNAME:-}" "$PWD" "$__sw_escaped"
  __sw_histcmd=$HISTCMD
  return $status
}

# Last in PROMPT_COMMAND: wraps whatever PS1 the user (or their PROMPT_COMMAND) set in A/B marks.
__sw_wrap_ps1() {
  local status=$?
  if [[ $PS1 != *'133;B'* ]]; then __sw_ps1=$PS1; fi
  PS1='\[\e]133;A\a\]'$__sw_ps1'\[\e]133;B\a\]'
  return $status
}

# Expanded through PS0 (in a subshell) after a command line is read and before it runs: the line
# from history when history recorded it (the history number moved; otherwise the terminal model
# takes the typed echo), then the output-start mark.
__sw_preexec() {
  local entry
  if [[ $HISTCMD != "$__sw_histcmd" ]] && entry=$(HISTTIMEFORMAT= builtin history 1 2>/dev/null); then
    entry=${entry#"${entry%%[![:space:]]*}"}
    entry=${entry#"${entry%%[![:digit:]]*}"}
    entry=${entry#\*}; entry=${entry#  }
    __sw_escape "$entry"
    printf '\e]633;E;%s\a' "$__sw_escaped"
  fi
  printf '\e]133;C\a'
}

PS0='$(__sw_preexec)'"${PS0:-}"
if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
  PROMPT_COMMAND=(__sw_precmd "${PROMPT_COMMAND[@]}" __sw_wrap_ps1)
else
  PROMPT_COMMAND=__sw_precmd$'\n'"${PROMPT_COMMAND:+$PROMPT_COMMAND$'\n'}"__sw_wrap_ps1
fi

fi
