usage_error() {
    echo "prepare: $*" >&2
    exit 2
}

tipc_err() {
    echo "prepare: error: $*" >&2
}

fail() {
    tipc_err "$@"
    exit 1
}

# Settings from the environment, checked before anything is done.
case ${TIPC_OFFLINE:-0} in
1 | true | yes) OFFLINE=1 ;;
"" | 0 | false | no) OFFLINE=0 ;;
*) usage_error "TIPC_OFFLINE must be 1 or 0, not '${TIPC_OFFLINE:-}'" ;;
esac
RETRIES=${TIPC_RETRIES:-3}
if [[ ! $RETRIES =~ ^[1-9][0-9]{0,2}$ ]] || ((RETRIES > 100)); then
    usage_error "TIPC_RETRIES must be a positive integer (at most 100), not '$RETRIES'"
fi
BACKOFF=${TIPC_BACKOFF:-1}
if [[ ! $BACKOFF =~ ^[0-9]{1,6}(\.[0-9]{1,9})?$ ]] || ! awk -v b="$BACKOFF" 'BEGIN { exit !(b <= 3600) }'; then
    usage_error "TIPC_BACKOFF must be a number of seconds (at most 3600), not '$BACKOFF'"
fi
TIMEOUT=${TIPC_TIMEOUT:-30}
if [[ ! $TIMEOUT =~ ^[1-9][0-9]{0,3}$ ]] || ((TIMEOUT > 3600)); then
    usage_error "TIPC_TIMEOUT must be a positive integer (at most 3600), not '$TIMEOUT'"
fi
# Bounds on what one download or extraction may cost (run/prepare/options.py explains the
# defaults; `tipcgen prepare` reads the same variables).
DEADLINE=${TIPC_DEADLINE:-}
if [[ -n $DEADLINE ]] && { [[ ! $DEADLINE =~ ^[1-9][0-9]{0,7}$ ]] || ((DEADLINE > 10000000)); }; then
    usage_error "TIPC_DEADLINE must be a positive integer (at most 1e+07), not '$DEADLINE'"
fi
MAX_RATIO=${TIPC_MAX_RATIO:-100}
if [[ ! $MAX_RATIO =~ ^[1-9][0-9]{0,6}$ ]] || ((MAX_RATIO > 1000000)); then
    usage_error "TIPC_MAX_RATIO must be a positive integer (at most 1e+06), not '$MAX_RATIO'"
fi
MAX_REDIRECTS=20

# tipc_bytes OUT NAME DEFAULT: the size setting NAME: bytes, or a number with a K, M, G or T suffix.
tipc_bytes() {
    local -n _b_out=$1
    local _b_raw=${!2:-} _b_unit=1
    if [[ -z $_b_raw ]]; then
        _b_out=$3
        return 0
    fi
    if [[ ! $_b_raw =~ ^([0-9]{1,16})([KkMmGgTt]?)$ ]]; then
        usage_error "$2 must be a number of bytes, optionally with a K, M, G or T suffix, not '$_b_raw'"
    fi
    case ${BASH_REMATCH[2]} in
    K | k) _b_unit=$((1 << 10)) ;;
    M | m) _b_unit=$((1 << 20)) ;;
    G | g) _b_unit=$((1 << 30)) ;;
    T | t) _b_unit=$((1 << 40)) ;;
    esac
    _b_out=$((10#${BASH_REMATCH[1]}))
    if ((_b_out < 1 || _b_out > (1 << 50) / _b_unit)); then
        usage_error "$2 must be from 1 byte to 1P, not '$_b_raw'"
    fi
    _b_out=$((_b_out * _b_unit))
}
tipc_bytes MAX_SIZE TIPC_MAX_SIZE $((20 << 30))
tipc_bytes MAX_EXTRACT TIPC_MAX_EXTRACT $((64 << 30))
FILE_ROOT=${TIPC_ALLOW_FILE_URLS:-}
if [[ -n $FILE_ROOT && $FILE_ROOT != /* ]]; then
    usage_error "TIPC_ALLOW_FILE_URLS must be an absolute directory, not '$FILE_ROOT'"
fi
MIRROR=${TIPC_MIRROR:-}
MIRROR=${MIRROR%/}
if [[ -n $MIRROR && ! $MIRROR =~ ^(https?://|file:///) ]]; then
    usage_error "TIPC_MIRROR must be an http(s) or file:/// URL, not '$MIRROR'"
fi
MIRROR_LAYOUT=${TIPC_MIRROR_LAYOUT:-base}
case $MIRROR_LAYOUT in
base | host) ;;
*) usage_error "TIPC_MIRROR_LAYOUT must be base or host, not '$MIRROR_LAYOUT'" ;;
esac
if [[ -n ${TIPC_CACHE:-} ]]; then
    CACHE=$TIPC_CACHE
elif [[ -n ${HOME:-} ]]; then
    CACHE=$HOME/.cache/tipcgen
else
    usage_error "set TIPC_CACHE (or HOME) to say where downloads are cached"
fi
DOWNLOADER=${TIPC_DOWNLOADER:-}
case $DOWNLOADER in
"")
    if command -v curl >/dev/null 2>&1; then
        DOWNLOADER=curl
    elif command -v wget >/dev/null 2>&1; then
        DOWNLOADER=wget
    else
        DOWNLOADER=none
    fi
    ;;
curl | wget)
    command -v "$DOWNLOADER" >/dev/null 2>&1 || usage_error "TIPC_DOWNLOADER=$DOWNLOADER, but $DOWNLOADER is not installed"
    ;;
*) usage_error "TIPC_DOWNLOADER must be curl or wget, not '$DOWNLOADER'" ;;
esac
PIP_PYTHON=${python_name:-python3}

# tipc_sha256 OUT FILE: the sha256 of FILE.
tipc_sha256() {
    local -n _h_out=$1
    local _h_line
    if command -v sha256sum >/dev/null 2>&1; then
        _h_line=$(sha256sum <"$2") || return 1
    else
        _h_line=$(shasum -a 256 <"$2") || return 1
    fi
    _h_out=${_h_line%% *}
}

# tipc_size OUT FILE: the size of FILE in bytes.
tipc_size() {
    local -n _z_out=$1
    _z_out=$(wc -c <"$2") || return 1
    _z_out=${_z_out//[[:space:]]/}
}

# tipc_http_status CODE REDIRECTS LOG: the last HTTP status in LOG (wget's --server-response or
# curl's --dump-header), and how many redirects (3xx) it lists.
tipc_http_status() {
    local -n _st_out=$1 _st_moves=$2
    local _st_line _st_re='^ *HTTP/[0-9.]+ ([0-9]{3})'
    _st_out=""
    _st_moves=0
    [[ -f $3 ]] || return 0
    while IFS= read -r _st_line; do
        if [[ $_st_line =~ $_st_re ]]; then
            _st_out=${BASH_REMATCH[1]}
            if [[ $_st_out == 3?? ]]; then
                _st_moves=$((_st_moves + 1))
            fi
        fi
    done <"$3"
}

# tipc_source OUT URL BASE: where to fetch URL from. With TIPC_MIRROR set: layout base swaps the
# step's mirror BASE for it (URL itself when BASE is empty or not a prefix, with a warning);
# layout host fetches every URL as $TIPC_MIRROR/<host>/<path>.
tipc_source() {
    local -n _src_out=$1
    _src_out=$2
    if [[ -z $MIRROR ]]; then
        return 0
    fi
    if [[ $MIRROR_LAYOUT == host && $2 == *://* ]]; then
        _src_out=$MIRROR/${2#*://}
    elif [[ -n $3 && $2 == "$3"/* ]]; then
        _src_out=$MIRROR${2#"$3"}
    else
        echo "prepare: warning: TIPC_MIRROR is set but $2 declares no \`mirror\` base it lies under, so it is fetched from its origin; declare \`mirror:\` on the step, or set TIPC_MIRROR_LAYOUT=host to fetch every URL as \$TIPC_MIRROR/<host>/<path>" >&2
    fi
}

# tipc_deadline_err SECONDS URL / tipc_too_big URL SIZE LIMIT: the errors of the two bounds.
tipc_deadline_err() {
    tipc_err "download took longer than $1 s, its deadline (TIPC_DEADLINE; by default 600 s + 1 s per 256 KiB of the declared size, 3600 s without one): $2"
}

tipc_too_big() {
    if [[ -n $2 ]]; then
        tipc_err "refusing $1: larger than its declared size, $2 bytes"
    else
        tipc_err "refusing $1: larger than TIPC_MAX_SIZE, $3 bytes (no size declared)"
    fi
}

# tipc_copy_file URL PART SIZE LIMIT ROOT: copy the file:// URL to PART: only a regular file that,
# with every link on its path resolved, lies inside the directory ROOT (empty: none may be read).
tipc_copy_file() {
    local url=$1 part=$2 size=$3 limit=$4 root=$5 real real_root have
    if [[ -z $root ]]; then
        tipc_err "refusing $url: a file:// URL is read only below the directory TIPC_ALLOW_FILE_URLS names (a local mirror); set it, or use TIPC_MIRROR=file:///DIR"
        return 1
    fi
    if ! real_root=$(realpath -m -- "$root") || ! real=$(realpath -m -- "${url#file://}"); then
        tipc_err "cannot resolve $url"
        return 1
    fi
    case $real in
    "$real_root" | "$real_root"/*) ;;
    *)
        tipc_err "refusing $url: it leads to $real, outside $real_root"
        return 1
        ;;
    esac
    if [[ ! -e $real ]]; then
        tipc_err "cannot copy $url: No such file or directory"
        return 1
    fi
    if [[ ! -f $real ]]; then
        tipc_err "refusing $url: not a regular file"
        return 1
    fi
    head -c "$((limit + 1))" <"$real" >"$part" || {
        tipc_err "cannot copy $url"
        return 1
    }
    tipc_size have "$part" || return 1
    if ((have > limit)); then
        tipc_too_big "$url" "$size" "$limit"
        return 1
    fi
}

# tipc_get URL PART SIZE ROOT: download URL into PART (a file:// URL: copy it from below the
# directory ROOT) within the file's deadline, and never past its declared SIZE (else
# TIPC_MAX_SIZE) + 1 byte: each try's bytes pass through `head -c`, which works for an endless
# body without Content-Length, for curl and wget alike. A download that fails leaves no PART.
tipc_get() {
    local url=$1 part=$2 size=$3 root=$4 limit seconds
    limit=${size:-$MAX_SIZE}
    if [[ -n $DEADLINE ]]; then
        seconds=$DEADLINE
    elif [[ -n $size ]]; then
        seconds=$((600 + size / 262144))
    else
        seconds=3600
    fi
    if [[ $url == file://* ]]; then
        tipc_copy_file "$url" "$part" "$size" "$limit" "$root" && return 0
    elif tipc_fetch "$url" "$part" "$size" "$limit" "$seconds"; then
        return 0
    fi
    rm -f -- "$part" "$part.log"
    return 1
}

# tipc_fetch URL PART SIZE LIMIT SECONDS: download URL into PART, resuming what PART already
# holds and retrying transient failures (no connection, cut transfers, 408, 429, 5xx) with
# back-off, for SECONDS at most; redirects: MAX_REDIRECTS, to http(s) only.
tipc_fetch() {
    local url=$1 part=$2 size=$3 limit=$4 seconds=$5 end try=1 delay=$BACKOFF code moves rc why have left
    local -a cmd=() status=()
    end=$((SECONDS + seconds))
    while :; do
        have=0
        if [[ -f $part ]]; then
            tipc_size have "$part" || return 1
        fi
        if ((have > limit)); then # a stale part (of another server's answer): start again
            rm -f -- "$part"
            have=0
        fi
        left=$((end - SECONDS))
        if ((left <= 0)); then
            tipc_deadline_err "$seconds" "$url"
            return 1
        fi
        case $DOWNLOADER in
        curl)
            cmd=(curl -sS -L -f --max-redirs "$MAX_REDIRECTS" --proto "=http,https" --proto-redir "=http,https"
                --connect-timeout "$TIMEOUT" --speed-limit 1 --speed-time "$TIMEOUT" --max-time "$left"
                -D "$part.log" -o -)
            if ((have)); then
                cmd+=(-C "$have")
            fi
            "${cmd[@]}" -- "$url" | head -c "$((limit - have + 1))" >>"$part"
            status=("${PIPESTATUS[@]}")
            rc=${status[0]}
            ;;
        wget)
            # --foreground: Ctrl-C still reaches wget (timeout would put it in a process group of its own)
            cmd=(timeout --foreground "$left" wget -nv -S --tries=1 --max-redirect="$MAX_REDIRECTS" --timeout="$TIMEOUT" -O -)
            if ((have)); then
                cmd+=(--start-pos="$have") # the output starts there, whether or not the server resumes
            fi
            "${cmd[@]}" -- "$url" 2>"$part.log" | head -c "$((limit - have + 1))" >>"$part"
            status=("${PIPESTATUS[@]}")
            rc=${status[0]}
            if ((rc != 0)) && [[ -f $part.log ]]; then
                grep -v '^  ' "$part.log" >&2
            fi
            ;;
        *)
            tipc_err "cannot download $url: neither curl nor wget is installed"
            return 1
            ;;
        esac
        tipc_http_status code moves "$part.log"
        rm -f -- "$part.log"
        tipc_size have "$part" || return 1
        if ((have > limit)); then
            tipc_too_big "$url" "$size" "$limit"
            return 1
        fi
        if ((status[1] != 0)); then
            tipc_err "cannot write $part"
            return 1
        fi
        if ((rc == 0)); then
            return 0
        fi
        if ((SECONDS >= end)); then
            tipc_deadline_err "$seconds" "$url"
            return 1
        fi
        if ((rc == 33)); then
            echo "prepare: the server cannot resume $url; starting again"
            rm -f -- "$part"
        fi
        if [[ $code == 416 && -s $part ]]; then
            return 0 # PART was complete already; the size and sha256 checks tell
        fi
        if [[ -f $part && ! -s $part ]]; then
            rm -f -- "$part"
        fi
        why="$DOWNLOADER exit code $rc"
        if [[ $code =~ ^[1-9][0-9][0-9]$ ]]; then
            why="HTTP $code"
        fi
        if ((moves > MAX_REDIRECTS)); then
            tipc_err "download failed (more than $MAX_REDIRECTS redirects): $url"
            return 1
        fi
        case $code in
        3??)
            if ((rc == 1)); then # curl and wget alike: a scheme they do not follow (--proto-redir)
                tipc_err "download failed (redirected to a URL that is not http(s)): $url"
                return 1
            fi
            ;;
        408 | 429 | 5??) ;;
        4??)
            tipc_err "download failed ($why): $url"
            return 1
            ;;
        esac
        if ((try >= RETRIES)); then
            tipc_err "download failed after $try tries ($why): $url"
            return 1
        fi
        echo "prepare: try $try of $RETRIES failed ($why); retrying $url in ${delay}s"
        left=$((end - SECONDS))
        if awk -v d="$delay" -v l="$left" 'BEGIN { exit !(d < l) }'; then
            sleep "$delay"
        else
            sleep "$((left > 0 ? left : 0))"
        fi
        delay=$(awk -v d="$delay" 'BEGIN { print d * 2 }')
        try=$((try + 1))
    done
}

# tipc_cache_fill URL BASE SHA SIZE CFILE: make CFILE, URL's entry in the cache, hold its bytes,
# checked against SIZE and SHA when they are known. Prepares sharing one cache (nodes whose home
# is on NFS) take turns with flock on the cache directory (no lock file is left behind): the
# second finds the first's download done instead of racing it on the same .part file. Where
# flock is missing or refuses (some NFS mounts), prepare goes on unlocked.
tipc_cache_fill() {
    local lock_fd mask
    mask=$(umask)
    umask 077 # the cache is private: 0700 directories, 0600 files
    mkdir -p -- "$CACHE" || fail "cannot create $CACHE"
    if command -v flock >/dev/null 2>&1 && { exec {lock_fd}<"$CACHE"; } 2>/dev/null; then
        flock "$lock_fd" 2>/dev/null # released when done, or when a failure exits prepare
        tipc_cache_fill_locked "$@"
        exec {lock_fd}<&-
    else
        tipc_cache_fill_locked "$@"
    fi
    umask "$mask"
}

tipc_cache_fill_locked() {
    local url=$1 base=$2 sha=$3 size=$4 cfile=$5 src part actual have root=$FILE_ROOT
    if [[ -f $cfile ]]; then
        if [[ -z $sha ]]; then
            echo "prepare: cached $url"
            return 0
        fi
        tipc_sha256 actual "$cfile" || fail "cannot read $cfile"
        if [[ $actual == "$sha" ]]; then
            echo "prepare: cached $url"
            return 0
        fi
        echo "prepare: the cached copy of $url is corrupt (sha256 $actual); fetching it again" >&2
        rm -f -- "$cfile"
    fi
    if ((OFFLINE)); then
        fail "offline (TIPC_OFFLINE=1) and not in the cache $CACHE: $url"
    fi
    mkdir -p -- "${cfile%/*}" || fail "cannot create ${cfile%/*}"
    part=$cfile.part
    tipc_source src "$url" "$base"
    if [[ $src == "$url" ]]; then
        echo "prepare: downloading $url"
    else
        echo "prepare: downloading $src (mirror of $url)"
        if [[ $MIRROR == file://* ]]; then
            root=${MIRROR#file://} # a mirrored file:// URL stays inside TIPC_MIRROR
        fi
    fi
    if ! tipc_get "$src" "$part" "$size" "$root"; then
        rmdir -- "${cfile%/*}" 2>/dev/null
        exit 1
    fi
    tipc_size have "$part" || fail "cannot read $part"
    if [[ -n $size && $have != "$size" ]]; then
        rm -f -- "$part"
        rmdir -- "${cfile%/*}" 2>/dev/null
        fail "size mismatch for $src: expected $size bytes, got $have"
    fi
    tipc_sha256 actual "$part" || fail "cannot read $part"
    if [[ -n $sha && $actual != "$sha" ]]; then
        rm -f -- "$part"
        rmdir -- "${cfile%/*}" 2>/dev/null
        fail "sha256 mismatch for $src: expected $sha, actual $actual"
    fi
    if [[ -z $sha ]]; then
        echo "prepare: $url is unverified (no sha256 in the spec); it has sha256 $actual"
    fi
    mv -f -- "$part" "$cfile" || fail "cannot write $cfile"
}

# tipc_stamp_ok TO FILE SOURCE SHA: TO/.tipcgen/FILE.stamp records SOURCE (and SHA, when given)
# and every entry it lists is still in TO.
tipc_stamp_ok() {
    local to=$1 stamp=$1/.tipcgen/$2.stamp source=$3 sha=$4 line key value ok_source=0 ok_sha=0
    [[ -f $stamp ]] || return 1
    while IFS= read -r line || [[ -n $line ]]; do
        key=${line%% *}
        value=${line#* }
        case $key in
        source) [[ $value == "$source" ]] && ok_source=1 ;;
        sha256) [[ -z $sha || $value == "$sha" ]] && ok_sha=1 ;;
        entry) [[ -e $to/$value || -L $to/$value ]] || return 1 ;;
        esac
    done <"$stamp"
    ((ok_source && ok_sha))
}

# tipc_clean OUT PATH: PATH without empty and `.` components; fails when PATH is absolute
# or has a `..` component.
tipc_clean() {
    local -n _c_out=$1
    local _c_part
    local -a _c_parts=() _c_keep=()
    _c_out=""
    [[ $2 == /* ]] && return 1
    IFS=/ read -r -a _c_parts <<<"$2"
    for _c_part in "${_c_parts[@]}"; do
        case $_c_part in
        "" | .) ;;
        ..) return 1 ;;
        *) _c_keep+=("$_c_part") ;;
        esac
    done
    local IFS=/
    _c_out="${_c_keep[*]}"
}

# The symbolic links of the archive being checked (cleaned member name -> 1).
declare -A TIPC_LINKS=()

# tipc_inside_link MEMBER: 0 when a proper prefix of MEMBER is a link of the archive.
tipc_inside_link() {
    local prefix="" part
    local -a parts=()
    IFS=/ read -r -a parts <<<"$1"
    unset 'parts[-1]'
    for part in "${parts[@]}"; do
        prefix+=${prefix:+/}$part
        [[ -n ${TIPC_LINKS[$prefix]+x} ]] && return 0
    done
    return 1
}

# tipc_link_inside MEMBER TARGET: 0 when the link MEMBER -> TARGET stays inside the directory the
# archive is extracted into, with no `..` after a component that is itself a link.
tipc_link_inside() {
    local part prefix i
    local -a dir=() parts=() stack=()
    [[ -n $2 && $2 != /* ]] || return 1
    IFS=/ read -r -a dir <<<"$1"
    unset 'dir[-1]'
    IFS=/ read -r -a parts <<<"$2"
    for part in "${dir[@]}" "${parts[@]}"; do
        case $part in
        "" | .) ;;
        ..)
            ((${#stack[@]})) || return 1
            prefix=""
            for i in "${!stack[@]}"; do
                prefix+=${prefix:+/}${stack[i]}
                [[ -n ${TIPC_LINKS[$prefix]+x} ]] && return 1
            done
            unset 'stack[-1]'
            ;;
        *) stack+=("$part") ;;
        esac
    done
    return 0
}

# tipc_check_names LABEL NAME...: refuse absolute or `..` names, names inside a link of the
# archive, names twice when one is a link, and a top-level .tipcgen.
tipc_check_names() {
    local label=$1 name clean
    local -A seen=()
    shift
    for name in "$@"; do
        if ! tipc_clean clean "$name"; then
            tipc_err "refusing $label: member '$name' is absolute or contains '..'"
            return 1
        fi
        [[ -n $clean ]] || continue
        if [[ ${clean%%/*} == .tipcgen ]]; then
            tipc_err "refusing $label: member '$name' would overwrite prepare's .tipcgen state"
            return 1
        fi
        if tipc_inside_link "$clean"; then
            tipc_err "refusing $label: member '$name' lies inside a link of the archive"
            return 1
        fi
        if [[ -n ${seen[$clean]+x} && (-n ${TIPC_LINKS[$clean]+x}) ]]; then
            tipc_err "refusing $label: '$name' appears twice and once as a link"
            return 1
        fi
        seen[$clean]=1
    done
}

# tipc_too_much LABEL LIMIT: the error of an archive past its extraction bound.
tipc_too_much() {
    local why=TIPC_MAX_EXTRACT
    if (($2 < MAX_EXTRACT)); then
        why="TIPC_MAX_RATIO=$MAX_RATIO times the archive's size, counted as at least 1 MiB"
    fi
    tipc_err "refusing $1: it would extract to more than $2 bytes ($why; each member counts its size + 512 bytes)"
}

# tipc_extract_limit OUT ARCHIVE: the bytes ARCHIVE may extract to: TIPC_MAX_RATIO times its size
# (counted as at least 1 MiB), at most TIPC_MAX_EXTRACT.
tipc_extract_limit() {
    local -n _el_out=$1
    local _el_size
    tipc_size _el_size "$2" || return 1
    if ((_el_size < 1048576)); then
        _el_size=1048576
    fi
    if ((_el_size > MAX_EXTRACT / MAX_RATIO)); then
        _el_out=$MAX_EXTRACT
    else
        _el_out=$((_el_size * MAX_RATIO))
    fi
}

# tipc_check_tar ARCHIVE LABEL LIMIT: refuse, before anything is written, a tarball whose members
# would land outside the directory it is extracted into (absolute or `..` names, links leading out
# of it, hard links to such names), that holds devices or fifos, or whose members add up to more
# than LIMIT bytes (each its size + 512: tar writes a member's size from its header, whatever the
# compression). The listing is read as tar makes it: past LIMIT, tar is stopped at once, before it
# decompresses the rest of a bomb. (tar runs as a background job writing into a FIFO: `wait` on a
# process substitution can miss its status.)
tipc_check_tar() {
    local archive=$1 label=$2 limit=$3 line type size name target clean plain re i fd pid dir total=0
    local -a names=() links=() targets=()
    re='^(.)[^ ]* +[^ ]+ +([^ ]+) +[^ ]+ +[^ ]+ +"((\\.|[^\\"])*)"( (->|link to) "((\\.|[^\\"])*)")?$'
    TIPC_LINKS=()
    if ! dir=$(mktemp -d) || ! mkfifo -- "$dir/listing"; then
        fail "cannot create a FIFO in ${TMPDIR:-/tmp}"
    fi
    LC_ALL=C tar --numeric-owner --absolute-names --quoting-style=c -tvf "$archive" >"$dir/listing" &
    pid=$!
    exec {fd}<"$dir/listing"
    rm -rf -- "$dir"
    while IFS= read -r -u "$fd" line; do
        [[ -n $line ]] || continue
        if ! tipc_tar_line "$label" "$line" || ((total > limit)); then
            if ((total > limit)); then
                tipc_too_much "$label" "$limit"
            fi
            kill "$pid" 2>/dev/null
            exec {fd}<&-
            wait "$pid" 2>/dev/null
            return 1
        fi
    done
    exec {fd}<&-
    if ! wait "$pid"; then
        tipc_err "cannot read $archive (not a tar archive?)"
        return 1
    fi
    tipc_check_names "$label" "${names[@]}" || return 1
    for i in "${!links[@]}"; do
        if ! tipc_link_inside "${links[i]}" "${targets[i]}"; then
            tipc_err "refusing $label: link \"${links[i]}\" -> \"${targets[i]}\" points outside"
            return 1
        fi
    done
}

# tipc_tar_line LABEL LINE: one line of tipc_check_tar's listing, checked and added to its names,
# links, targets and total (the caller's locals).
tipc_tar_line() {
    local label=$1 line=$2
    if [[ ! $line =~ $re ]]; then
        tipc_err "refusing $label: cannot read its listing line: $line"
        return 1
    fi
    type=${BASH_REMATCH[1]}
    size=${BASH_REMATCH[2]}
    name=${BASH_REMATCH[3]}
    target=${BASH_REMATCH[7]}
    plain=${name//\\\\/}
    if [[ $plain == *\\n* ]]; then
        tipc_err "refusing $label: member \"$name\" has a newline in its name"
        return 1
    fi
    if ! tipc_clean clean "$name"; then
        tipc_err "refusing $label: member \"$name\" is absolute or contains '..'"
        return 1
    fi
    case $type in
    - | d | C | S) ;;
    l)
        if [[ -z $clean ]]; then
            tipc_err "refusing $label: member \"$name\" is a link to the extraction directory itself"
            return 1
        fi
        TIPC_LINKS[$clean]=1
        links+=("$clean")
        targets+=("$target")
        ;;
    h)
        if ! tipc_clean plain "$target"; then
            tipc_err "refusing $label: hard link \"$name\" points outside (\"$target\")"
            return 1
        fi
        ;;
    *)
        tipc_err "refusing $label: member \"$name\" is a device, fifo or other special file"
        return 1
        ;;
    esac
    if [[ ! $size =~ ^[0-9]{1,18}$ ]]; then
        tipc_err "refusing $label: cannot read the size of member \"$name\": $size"
        return 1
    fi
    if [[ $type == - || $type == C || $type == S ]]; then
        total=$((total + 10#$size))
    fi
    total=$((total + 512))
    names+=("$name")
}

# tipc_zip_pattern OUT NAME: NAME as an unzip pattern matching only itself.
tipc_zip_pattern() {
    local -n _zp_out=$1
    _zp_out=${2//[[]/[[]}
    _zp_out=${_zp_out//[*]/[*]}
    _zp_out=${_zp_out//[?]/[?]}
}

# tipc_check_zip ARCHIVE LABEL LIMIT: the same checks for a zip archive (links are entries made on
# Unix with the link file type; their target is their content), and no encrypted entries (unzip
# would wait at a password prompt). A zip's listed sizes can lie (unzip writes an entry's whole
# stream), so what unzip would write is measured too, through `head -c`: no more than LIMIT bytes
# are ever decompressed, and none written.
tipc_check_zip() {
    local archive=$1 label=$2 limit=$3 listing line name clean pattern target re i total actual
    local -a names=() links=() targets=()
    re='^(.)[^ ]* +[^ ]+ +[^ ]+ +([0-9]+) +([^ ]+) +[^ ]+ +[0-9]{8}\.[0-9]{6} (.*)$'
    listing=$(unzip -Z1 "$archive") || {
        tipc_err "cannot read $archive (not a zip archive?)"
        return 1
    }
    mapfile -t names <<<"$listing"
    for name in "${names[@]}"; do
        if [[ $name == *\\* ]]; then
            tipc_err "refusing $label: member '$name' has a backslash in its name"
            return 1
        fi
    done
    total=$((${#names[@]} * 512))
    TIPC_LINKS=()
    listing=$(unzip -Z -sT "$archive") || {
        tipc_err "cannot read $archive"
        return 1
    }
    while IFS= read -r line; do
        [[ $line =~ $re ]] || continue
        name=${BASH_REMATCH[4]}
        if [[ ${BASH_REMATCH[3]} == [TB]* ]]; then
            tipc_err "refusing $label: member '$name' is encrypted"
            return 1
        fi
        if ((${#BASH_REMATCH[2]} > 18)) || (((total += 10#${BASH_REMATCH[2]}) > limit)); then
            tipc_too_much "$label" "$limit"
            return 1
        fi
        if [[ ${BASH_REMATCH[1]} == l ]]; then
            if ! tipc_clean clean "$name" || [[ -z $clean ]]; then
                tipc_err "refusing $label: link '$name' is absolute or contains '..'"
                return 1
            fi
            tipc_zip_pattern pattern "$name"
            target=$(unzip -P "" -p "$archive" "$pattern" | head -c 4097) || {
                tipc_err "cannot read link '$name' in $archive"
                return 1
            }
            if ((${#target} > 4096)); then
                tipc_err "refusing $label: link '$name' has a target longer than 4096 bytes"
                return 1
            fi
            TIPC_LINKS[$clean]=1
            links+=("$clean")
            targets+=("$target")
        fi
    done <<<"$listing"
    actual=$(unzip -P "" -p "$archive" 2>/dev/null | head -c "$((limit + 1))" | wc -c)
    if ((${#names[@]} * 512 + actual > limit)); then
        tipc_too_much "$label" "$limit"
        return 1
    fi
    tipc_check_names "$label" "${names[@]}" || return 1
    for i in "${!links[@]}"; do
        if ! tipc_link_inside "${links[i]}" "${targets[i]}"; then
            tipc_err "refusing $label: link \"${links[i]}\" -> \"${targets[i]}\" points outside"
            return 1
        fi
    done
}

# tipc_check_tree DIR SOURCE: after extraction, every link under DIR still resolves inside DIR.
tipc_check_tree() {
    local tree=$1 source=$2 root link real
    root=$(cd -- "$tree" && pwd -P) || return 1
    while IFS= read -r -d '' link; do
        real=$(realpath -m -- "$link") || return 1
        case $real in
        "$root" | "$root"/*) ;;
        *)
            tipc_err "refusing $source: link ${link#"$tree"/} points outside ($(readlink -- "$link"))"
            return 1
            ;;
        esac
    done < <(find "$tree" -type l -print0)
}

# tipc_replace NEW DEST STATE: move NEW to DEST in one rename; what DEST held is moved aside into
# STATE first when a rename cannot replace it (a directory), then deleted.
tipc_replace() {
    local new=$1 dest=$2 state=$3 trash
    if [[ -e $dest || -L $dest ]] && [[ (-d $dest && ! -L $dest) || (-d $new && ! -L $new) ]]; then
        trash=$(mktemp -d "$state/old.XXXXXX") || fail "cannot create a directory in $state"
        mv -T -- "$dest" "$trash/old" || fail "cannot move $dest aside"
        mv -T -- "$new" "$dest" || fail "cannot move $dest into place"
        rm -rf -- "$trash"
        return 0
    fi
    mv -fT -- "$new" "$dest" || fail "cannot move $dest into place"
}

# tipc_inside DIR DOING: refuse (exit 1) to DOING when DIR, as it resolves now (through any
# symbolic link on the way, made by an earlier step or already there), lies outside the model
# repo root (the current directory). `tipcgen prepare` checks the same (fetch.inside_root).
tipc_inside() {
    local root real
    root=$(pwd -P) || fail "cannot resolve the current directory"
    real=$(realpath -m -- "$1") || fail "cannot resolve $1"
    case $real in
    "$root" | "$root"/*) ;;
    *) fail "refusing to $2: $1 leads to $real, outside the model repo $root (a symbolic link on the way)" ;;
    esac
}

# tipc_abandon TMP DIR...: a failed install removes its temporary directory TMP and the
# directories DIR it created (innermost last in the list), when empty; fails, for `|| fail`.
tipc_abandon() {
    local i
    local -a dirs=("${@:2}")
    rm -rf -- "$1"
    for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
        rmdir -- "${dirs[i]}" 2>/dev/null
    done
    return 1
}

# tipc_install SRC SOURCE SHA TO FILE FORMAT [OLD NEW]...: copy SRC to TO/FILE (FORMAT file) or
# extract it into TO (tar, zip), renaming top-level entries OLD to NEW; then write the stamp.
tipc_install() {
    local src=$1 source=$2 sha=$3 to=$4 file=$5 format=$6 state tmp old new entry limit dir
    local -a entries=() made=()
    shift 6
    state=$to/.tipcgen
    tipc_inside "$to" "write into $to"
    tipc_inside "$state" "write prepare's state into $to"
    if [[ -z $sha ]]; then
        tipc_sha256 sha "$src" || fail "cannot read $src"
    fi
    if [[ $format != file ]]; then
        tipc_extract_limit limit "$src" || fail "cannot read $src"
    fi
    case $format in
    tar) tipc_check_tar "$src" "$source" "$limit" || exit 1 ;;
    zip) tipc_check_zip "$src" "$source" "$limit" || exit 1 ;;
    esac
    dir=$state
    while [[ ! -e $dir && ! -L $dir ]]; do # what this install creates, removed if it fails
        made=("$dir" "${made[@]}")
        dir=$(dirname -- "$dir")
    done
    mkdir -p -- "$state" || fail "cannot create $state"
    tmp=$(mktemp -d "$state/tmp.XXXXXX") || fail "cannot create a temporary directory in $state"
    case $format in
    file) cat -- "$src" >"$tmp/$file" || tipc_abandon "$tmp" "${made[@]}" || fail "cannot copy $src" ;;
    tar)
        tar --no-same-owner --no-same-permissions -xf "$src" -C "$tmp" ||
            tipc_abandon "$tmp" "${made[@]}" || fail "cannot extract $src"
        ;;
    zip) unzip -P "" -qq -o "$src" -d "$tmp" || tipc_abandon "$tmp" "${made[@]}" || fail "cannot extract $src" ;;
    esac
    if [[ $format != file ]] && ! tipc_check_tree "$tmp" "$source"; then
        tipc_abandon "$tmp" "${made[@]}"
        exit 1
    fi
    while (($# >= 2)); do
        old=$1
        new=$2
        shift 2
        if [[ ! -e $tmp/$old && ! -L $tmp/$old ]]; then
            tipc_abandon "$tmp" "${made[@]}"
            fail "cannot rename $old to $new: $source has no top-level entry $old"
        fi
        if [[ -e $tmp/$new || -L $tmp/$new ]]; then
            tipc_abandon "$tmp" "${made[@]}"
            fail "cannot rename $old to $new: $source has an entry $new too"
        fi
        mv -T -- "$tmp/$old" "$tmp/$new" || fail "cannot rename $old to $new"
    done
    mapfile -t entries < <(find "$tmp" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort)
    for entry in "${entries[@]}"; do
        tipc_replace "$tmp/$entry" "$to/$entry" "$state"
    done
    rm -rf -- "$tmp"
    if ! {
        printf 'source %s\n' "$source"
        printf 'sha256 %s\n' "$sha"
        if ((${#entries[@]})); then
            printf 'entry %s\n' "${entries[@]}"
        fi
    } >"$state/$file.stamp.tmp"; then
        fail "cannot write $state/$file.stamp"
    fi
    mv -f -- "$state/$file.stamp.tmp" "$state/$file.stamp" || fail "cannot write $state/$file.stamp"
    if [[ $format == file ]]; then
        echo "prepare: wrote $to/$file"
    else
        echo "prepare: extracted $file into $to: ${entries[*]}"
    fi
}

PHASE=check
MISSING=()

# TIPC_PREPARE_PLAN=1 (PHASE=plan): print each operation, one a line, tab-separated, and do
# nothing: what `tipcgen migrate` compares with the repo's own prepare.sh.
tipc_plan() {
    local IFS=$'\t'
    printf 'plan\t%s\n' "$*"
}

# tipc_download --url URL [--mirror BASE] [--sha256 SHA] [--size BYTES] --cache PATH --to DIR
#               --file NAME --format file|tar|zip [--rename OLD NEW]...: one artifact, fetched into
# $CACHE/PATH, then copied to DIR/NAME (file) or extracted into DIR.
tipc_download() {
    local url="" base="" sha="" size="" cfile="" to="" file="" format="" m
    local -a rename=()
    while (($# >= 2)); do
        case $1 in
        --url) url=$2 ;;
        --mirror) base=$2 ;;
        --sha256) sha=$2 ;;
        --size) size=$2 ;;
        --cache) cfile=$CACHE/$2 ;;
        --to) to=$2 ;;
        --file) file=$2 ;;
        --format) format=$2 ;;
        --rename)
            rename+=("$2" "${3:-}")
            shift
            ;;
        *) fail "tipc_download: unknown option $1" ;;
        esac
        shift 2
    done
    if [[ $PHASE == plan ]]; then
        tipc_plan download "$url" "$to" "$file" "$format" "${rename[@]}"
        return 0
    fi
    if tipc_stamp_ok "$to" "$file" "$url" "$sha"; then
        if [[ $PHASE == run ]]; then
            echo "prepare: up to date: $url in $to"
        fi
        return 0
    fi
    if [[ $PHASE == check ]]; then
        if [[ ! -f $cfile ]]; then
            for m in "${MISSING[@]}"; do
                [[ $m == "$url" ]] && return 0
            done
            MISSING+=("$url")
        fi
        return 0
    fi
    tipc_cache_fill "$url" "$base" "$sha" "$size" "$cfile"
    tipc_install "$cfile" "$url" "$sha" "$to" "$file" "$format" "${rename[@]}"
}

# tipc_extract ARCHIVE FORMAT TO FILE: an archive that ships with the model repo.
tipc_extract() {
    local archive=$1 format=$2 to=$3 file=$4 sha
    [[ $PHASE == plan ]] && tipc_plan extract "$archive" "$to"
    [[ $PHASE == run ]] || return 0
    [[ -f $archive ]] || fail "archive not found: $archive"
    tipc_sha256 sha "$archive" || fail "cannot read $archive"
    if tipc_stamp_ok "$to" "$file" "$archive" "$sha"; then
        echo "prepare: up to date: $archive in $to"
        return 0
    fi
    tipc_install "$archive" "$archive" "$sha" "$to" "$file" "$format"
}

# tipc_link PATH TARGET: `ln -s TARGET PATH`, replacing a link or a file but never a directory.
tipc_link() {
    local path=$1 target=$2
    [[ $PHASE == plan ]] && tipc_plan link "$path" "$target"
    [[ $PHASE == run ]] || return 0
    tipc_inside "$(dirname -- "$path")" "link $path"
    if [[ -L $path ]]; then
        if [[ $(readlink -- "$path") == "$target" ]]; then
            echo "prepare: up to date: $path -> $target"
            return 0
        fi
    elif [[ -d $path ]]; then
        fail "cannot link $path -> $target: a directory is in the way"
    fi
    mkdir -p -- "$(dirname -- "$path")" || fail "cannot create the directory of $path"
    ln -sfn -- "$target" "$path" || fail "cannot link $path -> $target"
    echo "prepare: linked $path -> $target"
}

# tipc_remove PATH...: rm -rf.
tipc_remove() {
    local p
    [[ $PHASE == plan ]] && tipc_plan remove "$@"
    [[ $PHASE == run ]] || return 0
    for p in "$@"; do
        tipc_inside "$(dirname -- "$p")" "remove $p"
    done
    rm -rf -- "$@" || fail "cannot remove $*"
    echo "prepare: removed $*"
}

# tipc_pip REQUIREMENT...: pip install with the config's python (offline: from nothing but what
# is installed).
tipc_pip() {
    local -a opts=()
    [[ $PHASE == plan ]] && tipc_plan pip "$@"
    [[ $PHASE == run ]] || return 0
    if ((OFFLINE)); then
        opts=(--no-index)
    fi
    echo "prepare: $PIP_PYTHON -m pip install $*"
    "$PIP_PYTHON" -m pip install "${opts[@]}" "$@" || fail "pip install failed: $*"
}

# tipc_run DIR COMMAND: a plain shell command of the spec.
tipc_run() {
    [[ $PHASE == plan ]] && tipc_plan run "$1" "$2"
    [[ $PHASE == run ]] || return 0
    tipc_inside "$1" "run a command in $1"
    echo "prepare: running in $1: $2"
    # TIPC_REPO_ROOT: the repo root, for a command that names a path from it (`$(pwd)/...`)
    (TIPC_REPO_ROOT=$PWD && export TIPC_REPO_ROOT && cd -- "$1" && bash -c "$2") || fail "command failed: $2"
}
