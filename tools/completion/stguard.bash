# bash completion for stguard (installed to share/bash-completion/completions/stguard)
_stguard()
{
    local cur prev words cword
    _init_completion || return
    local scan_opts="--format --profile --fail-on --allow-global --policy --include --exclude
        --max-header-len --max-tensors --max-rank --max-json-depth --max-memory --max-findings
        --limit --sha256 --stdin-name --no-digest --scan-git --jobs --quiet --verbose --output
        --progress --files-from --null --shard --check --sarif-info --signature --public-key
        --certificate-chain --trusted-root --identity --identity-provider --ignore-paths
        --no-ignore-git-paths --allow-symlinks --help"
    local limits="max_header_len= max_tensors= max_rank= max_json_depth= max_name_len=
        max_metadata_entries= max_memory= max_findings= max_pickle_stack= max_pickle_memo=
        max_pickle_string= max_nesting= max_inflate_bytes= max_inflate_ratio= profile="
    if [ "$cword" -eq 1 ]; then
        # a path there is `stguard scan PATH`
        COMPREPLY=($(compgen -W "scan inspect verify convert --version --help" -- "$cur"))
        [ "${#COMPREPLY[@]}" -eq 0 ] && _filedir
        return
    fi
    case $prev in
        --format)
            if [ "${words[1]}" = inspect ] || [ "${words[1]}" = verify ]; then
                COMPREPLY=($(compgen -W "text json" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "text json sarif" -- "$cur"))
            fi
            return ;;
        --profile) COMPREPLY=($(compgen -W "strict compat" -- "$cur")); return ;;
        --fail-on) COMPREPLY=($(compgen -W "ok warn invalid unsafe" -- "$cur")); return ;;
        --progress) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
        --limit) compopt -o nospace; COMPREPLY=($(compgen -W "$limits" -- "$cur")); return ;;
        --policy | --files-from | --check | -o | --output | --signature | --public-key | \
        --certificate-chain | --trusted-root | --ignore-paths) _filedir; return ;;
        --identity | --identity-provider) return ;;
        --select) return ;;
        --allow-global | --include | --exclude | --sha256 | --stdin-name | -j | --jobs | --shard | \
        --max-header-len | --max-tensors | --max-rank | --max-json-depth | --max-memory | \
        --max-findings | --max-output) return ;;
    esac
    case $cur in
        -*)
            if [ "${words[1]}" = convert ]; then
                COMPREPLY=($(compgen -W "--select --force --drop-aliases --strict-leaves
                    --sha256 --max-output --profile --max-memory --max-findings --limit
                    --help" -- "$cur"))
            elif [ "${words[1]}" = verify ]; then
                COMPREPLY=($(compgen -W "--signature --public-key --certificate-chain
                    --trusted-root --identity --identity-provider --ignore-paths
                    --no-ignore-git-paths --allow-symlinks --format --help" -- "$cur"))
            elif [ "${words[1]}" = inspect ]; then
                COMPREPLY=($(compgen -W "--format --output --tensor-sha256 --profile --max-header-len
                    --max-tensors --max-rank --max-json-depth --max-memory --max-findings --limit
                    --help" -- "$cur"))
            else
                COMPREPLY=($(compgen -W "$scan_opts" -- "$cur"))
            fi ;;
        *) _filedir ;;
    esac
}
complete -F _stguard stguard
