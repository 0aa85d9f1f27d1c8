#!/usr/bin/env bash
# `make test-cgroup-v2`: ssdartifact.memlimit on a real cgroup v2 host, for machines (like the
# project's) whose own hierarchy is v1: Debian 12's kernel booted under QEMU's software emulation (about 2
# minutes) from an initramfs holding Debian's python3.11, pytest and the
# artifact's code, with an ext4 disk for the page-cache test. Its /init (beside this file) passes
# the memory controller down the slices as systemd does, then runs the real-kernel tests of
# tests/test_memlimit.py from a login session's scope (holding processes), a delegated scope and
# a service under a slice without the controller, printing each one's enforcement. Needs root,
# apt (Debian's packages) and about 200 MB under results/tests/cgroup-v2-vm/.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="$repo/results/tests/cgroup-v2-vm"
mkdir -p "$work" && cd "$work"
if ! command -v qemu-system-x86_64 >/dev/null || ! command -v cpio >/dev/null; then
  apt-get install -y -qq --no-install-recommends qemu-system-x86 cpio e2fsprogs >/dev/null
fi
kernel_package=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
[ -d kernel ] || { apt-get download "$kernel_package" >/dev/null && dpkg-deb -x "$kernel_package"_*.deb kernel; }
vmlinuz=$(ls kernel/boot/vmlinuz-*)
rm -rf root && mkdir -p root/{bin,usr/bin,usr/lib,lib64,proc,sys,dev,tmp,scratch,work/tests,site,modules}
cp /usr/bin/python3.11 root/usr/bin/ && ln -s python3.11 root/usr/bin/python3
cp /usr/bin/dash root/bin/sh
cp /usr/bin/{cat,sleep,mkdir,echo,find,grep,wc,tail,ls} root/bin/
(cd /usr/lib && find python3.11 \( -name test -o -name __pycache__ -o -name idlelib -o -name tkinter \
  -o -name ensurepip \) -prune -o -print | cpio -pdm --quiet "$work/root/usr/lib")
for binary in root/usr/bin/python3.11 root/bin/* $(find root/usr/lib/python3.11/lib-dynload -name '*.so'); do
  ldd "$binary" 2>/dev/null | awk '/=>/ {print $3} /ld-linux/ {print $1}'
done | sort -u | while read -r lib; do
  [ -f "$lib" ] && mkdir -p "root$(dirname "$lib")" && cp -L "$lib" "root$lib"
done
site="$repo/.venv/lib/python3.11/site-packages"
cp -r "$site"/{pytest,_pytest,pluggy,iniconfig,packaging,pygments,py.py} root/site/
cp -r "$repo/core" root/work/ && cp "$repo/tests/test_memlimit.py" root/work/tests/
cp "$repo/pyproject.toml" "$repo/conftest.py" root/work/
for module in virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk crc16 mbcache \
    jbd2 crc32c_generic ext4; do
  cp "$(find kernel/lib/modules -name "$module.ko")" root/modules/
done
cp "$repo/tests/cgroup-v2-vm/init" root/init && chmod +x root/init
(cd root && find . | cpio -o -H newc --quiet | gzip -1) >initrd.gz
rm -f disk.img && truncate -s 1G disk.img && mkfs.ext4 -q -F disk.img
# software emulation: this kind of machine's nested KVM stops the kernel after its first lines
timeout 600 qemu-system-x86_64 -accel tcg -cpu max -m 1024 -smp 1 -nographic -no-reboot -kernel "$vmlinuz" -initrd initrd.gz \
  -drive file=disk.img,if=virtio,format=raw -append "console=ttyS0 panic=-1 rdinit=/init quiet" </dev/null |
  tr -d '\r' | grep -E '^(---|PASSED|FAILED|ERROR|enforcement|modules|[0-9]+ (passed|failed))' | tee console.log
[ "$(grep -c '^4 passed, 8 deselected' console.log)" -eq 3 ] && ! grep -q FAILED console.log
