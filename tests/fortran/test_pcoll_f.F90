! test_pcoll_f - module river's schemas, single-disk and parallel
! collections, gensort records and CRC32C from Fortran with mpi_f08, on
! 4 ranks: records of a bind(C) derived type go in through type(*) and
! come back exactly once (order-independent checksums reduced over the
! ranks), read by all 4 ranks and by a 3-rank sub-communicator, with a
! mirror covering a lost copy; error codes come back through ierr (an
! exclusive create of an existing name: RIVER_EEXIST). The
! layout and place calls (split, copy_disk, the reorderer on a partitioned
! and an interleaved collection, root, list) are checked in
! test_pcoll_f_layout.inc, included below.
module test_pcoll_f_util
  use, intrinsic :: iso_c_binding
  implicit none

  ! The schema and a derived type laid out as it: 8 + 8 + 4 + 12 = 32
  ! bytes with every field at its schema offset, so no padding.
  character(len=*), parameter :: SCHEMA_TEXT = &
      'id:int64, x:float64, n:int32, tag:char[12]; key=id'
  character(len=*), parameter :: SCHEMA_CANON = &
      'id:int64,x:float64,n:int32,tag:char[12];key=id'
  type, bind(C) :: rec
    integer(c_int64_t) :: id
    real(c_double) :: x
    integer(c_int32_t) :: n
    character(kind=c_char) :: tag(12)
  end type rec

contains

  ! The record with this id: every field derived from it.
  function make_rec(id) result(r)
    integer(c_int64_t), intent(in) :: id
    type(rec) :: r
    character(len=12) :: t
    integer :: i
    r%id = id
    r%x = real(id, c_double) * 0.25_c_double - 1.0_c_double / 3.0_c_double
    r%n = int(mod(id * 7919_c_int64_t, 1000003_c_int64_t), c_int32_t)
    write (t, '(a,i0)') 'rec', id
    do i = 1, 12
      r%tag(i) = t(i:i)
    end do
  end function make_rec

  logical function same_rec(a, b)
    type(rec), intent(in) :: a, b
    ! x bit for bit: the bytes written are the bytes read
    same_rec = a%id == b%id .and. a%n == b%n .and. all(a%tag == b%tag) &
               .and. transfer(a%x, 0_c_int64_t) == transfer(b%x, 0_c_int64_t)
  end function same_rec
end module test_pcoll_f_util

program test_pcoll_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use river
  use ftest
  use test_pcoll_f_util
  implicit none

  integer, parameter :: NEED_RANKS = 4
  integer(c_size_t), parameter :: BLOCK = 4096   ! 128 records a block
  character(len=*), parameter :: NAME = 'ftest.coll'
  integer :: ierr, rank, nranks, i, p, c
  integer :: color, subrank, subsize
  type(MPI_Comm) :: sub
  type(river_schema) :: s, s2, sdef
  type(river_pcoll) :: pc
  type(river_pcoll_info) :: pinfo
  type(river_pcoll_part) :: part
  type(river_coll) :: co
  type(river_coll_info) :: ci
  type(rec), allocatable :: mine(:)
  type(rec) :: one
  integer(c_int64_t) :: nmine, base, ntotal, q
  integer(c_int64_t) :: wsum(3), wtot(3), rsum(3), rtot(3)
  integer(c_size_t) :: rs, cnt, off, rpb
  integer(c_int64_t) :: nblocks, bad, nblk_v, nbad_v
  integer(c_size_t) :: rpb_v
  logical, allocatable :: badv(:)
  integer :: n, field, typ, cmp
  logical :: eq, local
  integer, allocatable :: dranks(:)
  character(len=:), allocatable :: str, root
  character(len=4096), allocatable :: disk(:)
  type(rec), allocatable :: spread(:)

  call ftest_init(rank, nranks)
  call river_init(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_init')
  call check(nranks == NEED_RANKS, 'run on 4 ranks')

  ! ---- schema
  call river_schema_parse(SCHEMA_TEXT, s, ierr)
  call check(ierr == RIVER_SUCCESS, 'schema parse')
  call river_schema_record_size(s, rs)
  call check(rs == 32, 'record size 32')
  call check(c_sizeof(one) == rs, 'derived type is the record size')
  call river_schema_nfields(s, n)
  call check(n == 4, 'nfields')
  call river_schema_field(s, 1, name=str, type=typ, count=cnt, offset=off)
  call check(str == 'x' .and. typ == RIVER_TYPE_FLOAT64 .and. cnt == 1 &
             .and. off == 8, 'field 1 is x:float64 at 8')
  call river_schema_field(s, 2, type=typ, offset=off)
  call check(typ == RIVER_TYPE_INT32 .and. off == 16, 'field 2 int32 at 16')
  call river_schema_field(s, 3, name=str, type=typ, count=cnt, offset=off)
  call check(str == 'tag' .and. typ == RIVER_TYPE_CHAR .and. cnt == 12 &
             .and. off == 20, 'field 3 is tag:char[12] at 20')
  call river_schema_field(s, 4, name=str, ierr=ierr)
  call check(ierr == RIVER_EINVAL, 'field 4 out of range')
  call river_schema_key(s, field, off, cnt)
  call check(field == 0 .and. off == 0 .and. cnt == 8, 'key is id')
  call river_schema_find(s, 'n', field)
  call check(field == 2, 'find n')
  call river_schema_find(s, 'nope', field, ierr)
  call check(ierr == RIVER_ENOTFOUND, 'find missing gives ENOTFOUND')
  call river_schema_format(s, str)
  call check(str == SCHEMA_CANON, 'format: ' // str)
  call river_schema_parse(str, s2)
  call river_schema_equal(s, s2, eq)
  call check(eq, 'formatted text parses back equal')
  call river_schema_destroy(s2)
  call river_schema_destroy(s2)   ! null: no-op
  call river_schema_create_default(sdef)
  call river_schema_record_size(sdef, rs)
  call check(rs == 100, 'default schema: 100 bytes')
  call river_schema_format(sdef, str)
  call check(str == RIVER_SCHEMA_DEFAULT // ';key=key', 'default text')
  call river_schema_equal(s, sdef, eq)
  call check(.not. eq, 'default differs')
  call river_schema_clone(sdef, s2)
  call river_schema_equal(s2, sdef, eq)
  call check(eq, 'clone equal')
  call river_schema_destroy(s2)
  call river_schema_destroy(sdef)
  call check(river_type_name(RIVER_TYPE_UINT64) == 'uint64', 'type name')
  call river_log_set_handler(capture, c_null_ptr)
  call river_schema_parse('id:int64,id:int32', s2, ierr)
  call check(ierr == RIVER_EFORMAT, 'duplicate field gives EFORMAT')
  call check(logged > 0, 'bad schema logged')
  call river_log_reset_handler()
  allocate(mine(2))
  mine(1) = make_rec(5_c_int64_t)
  mine(2) = make_rec(-3_c_int64_t)
  call river_schema_compare(s, mine(1), mine(2), cmp)
  call check(cmp > 0, 'compare 5 > -3 (signed key)')
  call river_schema_compare(s, mine(2), mine(1), cmp)
  call check(cmp < 0, 'compare -3 < 5')
  call river_schema_compare(s, mine(1), mine(1), cmp)
  call check(cmp == 0, 'compare equal')

  ! ---- CRC32C and gensort
  call test_crc_gensort()

  ! ---- a unique temporary root, made by rank 0
  root = ftest_mkdtemp('river-f-test-')

  ! ---- single-disk collection, one per rank
  call test_single(root // '/single.r' // itoa(rank) // '.rdat')

  ! ---- parallel collection: rank r writes partition r, mirrored twice
  nmine = 1000 + 373 * rank    ! 8 to 17 blocks of 128 records
  base = 0
  do q = 0, rank - 1
    base = base + 1000 + 373 * q
  end do
  ntotal = 0
  do q = 0, nranks - 1
    ntotal = ntotal + 1000 + 373 * q
  end do
  deallocate(mine)
  allocate(mine(nmine))
  do i = 1, int(nmine)
    mine(i) = make_rec(base + i - 1)
  end do
  wsum = 0
  do i = 1, int(nmine)
    call add_rec(wsum, mine(i))
  end do
  call MPI_Allreduce(wsum, wtot, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)

  call river_pcoll_create(MPI_COMM_WORLD, NAME, s, pc, root=root, &
                          disks='d%d', replication=2, block_size=BLOCK, &
                          ordered=.true., ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll create')
  ! Written in pieces: the first 10 of the whole array, a section, a
  ! strided section (passed as a contiguous copy), then the rest.
  call river_pcoll_write(pc, mine, 10_c_size_t)
  call river_pcoll_write(pc, mine(11:20), 10_c_size_t)
  allocate(spread(20))
  spread(1::2) = mine(21:30)
  spread(2::2) = make_rec(-1_c_int64_t)
  call river_pcoll_write(pc, spread(1::2), 10_c_size_t)
  call river_pcoll_write(pc, mine(31:nmine), int(nmine - 30, c_size_t), ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll write')
  call river_pcoll_info_get(pc, pinfo)
  call check(river_c_string(pinfo%name) == NAME, 'writer info name')
  call river_pcoll_commit(pc, ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll commit')
  call river_pcoll_commit(pc, ierr)
  call check(ierr == RIVER_EINVAL, 'commit of a null handle: EINVAL')

  ! Read back on all ranks.
  call river_pcoll_open(MPI_COMM_WORLD, NAME, pc, root=root, ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll open (world)')
  call check_info(pc)
  allocate(disk(nranks))   ! kept for cleanup after the removal
  do i = 0, nranks - 1
    call river_pcoll_disk_path(pc, i, str)
    call check(str == root // '/d' // itoa(i), 'disk path ' // str)
    disk(i + 1) = str
  end do
  call river_pcoll_disk_path(pc, nranks, str, ierr)
  call check(ierr == RIVER_EINVAL, 'disk path out of range')
  ! Shared disks (no %n): not node-local, disk d served by rank d.
  call river_pcoll_node_local(pc, local, ierr)
  call check(ierr == RIVER_SUCCESS .and. .not. local, 'not node-local')
  allocate(dranks(nranks))
  dranks = -1
  call river_pcoll_disk_ranks(MPI_COMM_WORLD, pc, dranks, ierr)
  call check(ierr == RIVER_SUCCESS, 'disk ranks')
  do i = 0, nranks - 1
    call check(dranks(i + 1) == i, 'disk ' // itoa(i) // ' served by rank ' &
               // itoa(dranks(i + 1)))
  end do
  call river_pcoll_disk_ranks(MPI_COMM_WORLD, pc, dranks(1:nranks - 1), ierr)
  call check(ierr == RIVER_EINVAL, 'disk ranks: too few entries')
  deallocate(dranks)
  call river_pcoll_schema(pc, s2)
  call river_schema_equal(s, s2, eq)
  call check(eq, 'pcoll schema equals the one written')
  call river_schema_destroy(s2)
  do p = 0, nranks - 1
    call river_pcoll_partition(pc, p, part)
    nblocks = (1000 + 373 * p + 127) / 128
    call check(part%nrecords == 1000 + 373 * p, 'partition nrecords')
    call check(part%bytes == 32 * part%nrecords, 'partition bytes')
    call check(part%nblocks == nblocks, 'partition nblocks')
    call check(part%first_disk == p, 'partition first disk')
    call check(index(river_c_string(part%path), NAME // '.p' // itoa(p) &
                     // '.') == 1, 'partition path ' // &
               river_c_string(part%path))
    call river_pcoll_blocks(pc, p, rpb, nblocks)
    call check(rpb == 128 .and. nblocks == part%nblocks, 'blocks')
    ! Each copy is a single-disk collection the table describes.
    if (rank == p) then
      do c = 0, 1
        str = trim(disk(mod(part%first_disk + c, nranks) + 1)) // '/' // &
              river_c_string(part%path)
        call river_coll_open(str, 32_c_size_t, co)
        call river_coll_stat(co, ci)
        call check(ci%nrecords == part%nrecords .and. ci%nblocks == &
                   part%nblocks .and. ci%table_crc == part%checksum, &
                   'copy matches its partition entry')
        call check(river_c_string(ci%label) == 'partition ' // itoa(p) // &
                   ' copy ' // itoa(c) // ' disk ' // &
                   itoa(mod(p + c, nranks)), 'copy label ' // &
                   river_c_string(ci%label))
        call river_coll_close(co)
      end do
    end if
  end do
  call river_pcoll_partition(pc, nranks, part, ierr)
  call check(ierr == RIVER_EINVAL, 'partition out of range')
  call read_all(pc, rank, nranks, rsum)
  call MPI_Allreduce(rsum, rtot, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  call check(all(rtot == wtot), 'world: every record read exactly once')
  call check(rtot(1) == ntotal, 'world: record count')
  ! Every copy of this rank's partitions verifies.
  do p = rank, nranks - 1, nranks
    do c = 0, 1
      call river_pcoll_verify_copy(pc, p, c, bad, ierr)
      call check(ierr == RIVER_SUCCESS, 'verify copy')
    end do
    call river_pcoll_verify_copy(pc, p, 2, bad, ierr)
    call check(ierr == RIVER_EINVAL, 'verify copy 2 of 2: EINVAL')
  end do
  call river_pcoll_close(pc)

  ! ---- layout and place: split, copy_disk, order, root, list
  call test_layout(root)

  ! ---- partitions begun by the writers, numbered by order
  call test_parts(root, s)

  ! Read back on a sub-communicator of 3 ranks.
  color = merge(0, MPI_UNDEFINED, rank < 3)
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, sub)
  rsum = 0
  if (rank < 3) then
    call MPI_Comm_rank(sub, subrank)
    call MPI_Comm_size(sub, subsize)
    call river_pcoll_open(sub, NAME, pc, root=root, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'pcoll open (3 ranks)')
    call check_info(pc)
    call read_all(pc, subrank, subsize, rsum)
    call river_pcoll_close(pc)
    call MPI_Comm_free(sub)
  end if
  call MPI_Allreduce(rsum, rtot, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  call check(all(rtot == wtot), '3 ranks: every record read exactly once')

  ! A lost copy: the mirror serves the data; only that copy fails.
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call river_pcoll_open(MPI_COMM_SELF, NAME, pc, root=root)
    call river_pcoll_partition(pc, 1, part)
    call check(c_unlink(cstr(trim(disk(part%first_disk + 1)) // '/' // &
                             river_c_string(part%path))) == 0, &
               'remove copy 0 of partition 1')
    call river_pcoll_close(pc)
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  call river_log_set_handler(capture, c_null_ptr)
  call river_pcoll_open(MPI_COMM_WORLD, NAME, pc, root=root)
  call read_all(pc, rank, nranks, rsum)
  call MPI_Allreduce(rsum, rtot, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
  call check(all(rtot == wtot), 'lost copy: every record still read once')
  if (rank == 1) then
    bad = 0
    call river_pcoll_verify_copy(pc, 1, 0, bad, ierr)
    call check(ierr /= RIVER_SUCCESS .and. bad == -1, &
               'lost copy fails verify as a whole file')
    call river_pcoll_verify_copy(pc, 1, 1, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'mirror copy verifies')
    ! Block by block: every block of the lost copy is bad, none of the
    ! mirror's.
    call river_pcoll_blocks(pc, 1, rpb_v, nblk_v)
    call river_pcoll_verify_blocks(pc, 1, 0, badv, nbad_v, ierr)
    call check(ierr /= RIVER_SUCCESS .and. size(badv) == nblk_v .and. &
               all(badv) .and. nbad_v == nblk_v, &
               'verify_blocks: the lost copy, every block bad')
    call river_pcoll_verify_blocks(pc, 1, 1, badv, nbad_v, ierr)
    call check(ierr == RIVER_SUCCESS .and. size(badv) == nblk_v .and. &
               .not. any(badv) .and. nbad_v == 0, &
               'verify_blocks: the mirror, no block bad')
    call river_pcoll_verify_blocks(pc, 1, 2, badv, nbad_v, ierr)
    call check(ierr == RIVER_EINVAL, 'verify_blocks copy 2 of 2: EINVAL')
  end if
  call river_pcoll_close(pc)
  call river_log_reset_handler()

  ! Error paths, with ierr: codes, no stop.
  call river_log_set_handler(capture, c_null_ptr)
  logged = 0
  call river_pcoll_open(MPI_COMM_WORLD, 'no-such-coll', pc, root=root, &
                        ierr=ierr)
  call check(ierr == RIVER_ENOTFOUND, 'open missing: ENOTFOUND')
  ! Rank 0 reads the metadata for every rank, so it alone says so.
  if (rank == 0) then
    call check(logged > 0 .and. last_level == RIVER_LOG_ERROR .and. &
               last_rank == rank .and. index(last_log, 'no-such-coll') > 0, &
               'open missing logged an error naming it, on rank 0')
  else
    call check(logged == 0, 'open missing: said once, not on rank > 0')
  end if
  call river_pcoll_open(MPI_COMM_WORLD, 'bad/name', pc, root=root, ierr=ierr)
  call check(ierr == RIVER_EINVAL, 'open bad name: EINVAL')
  call river_pcoll_check_name('bad/name', ierr)
  call check(ierr == RIVER_EINVAL, 'check_name bad/name')
  call river_pcoll_check_name('.hidden', ierr)
  call check(ierr == RIVER_EINVAL, 'check_name .hidden')
  call river_pcoll_check_name('ok-Name_1.x', ierr)
  call check(ierr == RIVER_SUCCESS, 'check_name ok')
  call river_pcoll_create(MPI_COMM_WORLD, 'too-many-mirrors', s, pc, &
                          root=root, replication=nranks + 1, ierr=ierr)
  call check(ierr == RIVER_EINVAL, 'replication > disks: EINVAL')
  call river_pcoll_create(MPI_COMM_WORLD, 'bad-disks', s, pc, root=root, &
                          disks='../d%d', ierr=ierr)
  call check(ierr == RIVER_EINVAL, 'disks climbing out of root: EINVAL')
  ! exclusive: NAME exists, so a write that may not replace it is refused
  call river_pcoll_create(MPI_COMM_WORLD, NAME, s, pc, root=root, &
                          ierr=ierr, exclusive=.true.)
  call check(ierr == RIVER_EEXIST, 'exclusive create of an existing name: ' &
             // 'EEXIST')
  call river_log_reset_handler()

  ! Remove on rank 0; then the name is gone for everyone.
  if (rank == 0) then
    call river_pcoll_remove(NAME, root=root, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'remove')
    call river_log_set_handler(capture, c_null_ptr)
    call river_pcoll_remove(NAME, root=root, ierr=ierr)
    call check(ierr == RIVER_ENOTFOUND, 'remove again: ENOTFOUND')
    call river_log_reset_handler()
  end if
  call MPI_Barrier(MPI_COMM_WORLD)
  call river_log_set_handler(capture, c_null_ptr)
  call river_pcoll_open(MPI_COMM_WORLD, NAME, pc, root=root, ierr=ierr)
  call check(ierr == RIVER_ENOTFOUND, 'removed: open gives ENOTFOUND')
  call river_log_reset_handler()

  call check_typed(root)

  ! Clean up: the directories must be empty now (remove took every data
  ! file, the failed creates left nothing behind).
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 1, size(disk)
      call check(c_rmdir(cstr(trim(disk(i)))) == 0, 'rmdir ' // trim(disk(i)))
    end do
    call check(c_rmdir(cstr(root)) == 0, 'rmdir ' // root)
  end if

  call river_schema_destroy(s)
  deallocate(mine, spread, disk, root)   ! main's variables are saved
  if (allocated(str)) deallocate(str)
  call river_finalize(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_finalize')
  call ftest_finish('test_pcoll_f')

contains

  ! A derived type that does not match the schema (issue 37: 48 bytes
  ! with its padding, the schema's records 44) is refused on write and
  ! on read, naming both sizes, and nothing is written; too few bytes are
  ! refused; bytes of the right length go in and come back.
  subroutine check_typed(root)
    character(len=*), intent(in) :: root
    type, bind(C) :: padded
      integer(c_int64_t) :: k
      integer(c_int32_t) :: a
      real(c_double) :: x(4)
    end type padded
    type(padded) :: w(8), rb(100)
    type(river_schema) :: ts
    type(river_pcoll) :: h
    type(river_pcoll_info) :: ti
    integer(c_int8_t), allocatable :: raw(:), back(:)
    integer(c_size_t) :: trs, got
    integer :: e, k
    call river_schema_parse('k:int64,a:int32,x0:float64,x1:float64,' // &
                            'x2:float64,x3:float64', ts, e)
    call river_schema_record_size(ts, trs)
    call check(e == RIVER_SUCCESS .and. trs == 44 .and. c_sizeof(w(1)) == 48, &
               'typed: 44-byte records, a 48-byte type')
    call river_pcoll_create(MPI_COMM_WORLD, 'typed', ts, h, root=root, &
                            disks='d%d', block_size=4096_c_size_t, ierr=e)
    call check(e == RIVER_SUCCESS, 'typed: create')
    do k = 1, 8
      w(k)%k = k
      w(k)%a = -k
      w(k)%x = real(k, c_double)
    end do
    call river_log_set_handler(capture, c_null_ptr)
    wanted = 0
    want = 'river_pcoll_write: records of 48 bytes given (the c_sizeof of ' // &
           'their derived type), the record size is 44 bytes'
    call river_pcoll_write(h, w, 8_c_size_t, e)
    call check(e == RIVER_EINVAL .and. wanted == 1, &
               'typed: a 48-byte type for 44-byte records refused, naming both')
    allocate(raw(44 * 8 - 1))
    raw = 7
    wanted = 0
    want = 'river_pcoll_write: 8 records of 44 bytes need 352 bytes; the ' // &
           'array holds 351'
    call river_pcoll_write(h, raw, 8_c_size_t, e)
    call check(e == RIVER_EINVAL .and. wanted == 1, 'typed: too few bytes refused')
    deallocate(want)
    call river_log_reset_handler()
    deallocate(raw)
    allocate(raw(44 * 8))
    do k = 1, size(raw)
      raw(k) = int(mod(k + 13 * rank, 127), c_int8_t)
    end do
    call river_pcoll_write(h, raw, 8_c_size_t, e)
    call check(e == RIVER_SUCCESS, 'typed: 8 records as bytes')
    call river_pcoll_info_get(h, ti)
    call river_pcoll_commit(h, e)
    call check(e == RIVER_SUCCESS, 'typed: commit (nothing of the refused writes)')
    call river_pcoll_open(MPI_COMM_WORLD, 'typed', h, root=root, ierr=e)
    call river_pcoll_info_get(h, ti)
    call check(e == RIVER_SUCCESS .and. ti%nrecords == 8 * nranks, &
               'typed: only the bytes written: ' // itoa(ti%nrecords))
    call river_log_set_handler(capture, c_null_ptr)
    wanted = 0
    want = 'river_pcoll_read_block: records of 48 bytes given'
    call river_pcoll_read_block(h, rank, 0_c_int64_t, rb, &
                                int(size(rb), c_size_t) * 48, got, e)
    call check(e == RIVER_EINVAL .and. wanted == 1, &
               'typed: reading into a 48-byte type refused, naming both')
    deallocate(want)
    call river_log_reset_handler()
    allocate(back(4096))
    call river_pcoll_read_block(h, rank, 0_c_int64_t, back, &
                                int(size(back), c_size_t), got, e)
    call check(e == RIVER_SUCCESS .and. got == 8, 'typed: read back as bytes')
    call check(all(back(1:352) == raw), 'typed: the bytes written')
    call river_pcoll_close(h)
    call river_pcoll_remove_all(MPI_COMM_WORLD, 'typed', root=root, &
                                disks='d%d', ierr=e)
    call check(e == RIVER_SUCCESS, 'typed: remove')
    call river_schema_destroy(ts)
  end subroutine check_typed

  ! Order-independent digest: count, sum of ids, sum of record CRCs.
  subroutine add_rec(sums, r)
    integer(c_int64_t), intent(inout) :: sums(3)
    type(rec), intent(in) :: r
    integer(c_int32_t) :: crc
    crc = 0
    call river_crc32c([r], c_sizeof(r), crc)
    sums(1) = sums(1) + 1
    sums(2) = sums(2) + r%id
    sums(3) = sums(3) + iand(int(crc, c_int64_t), int(z'FFFFFFFF', c_int64_t))
  end subroutine add_rec

  subroutine check_info(h)
    type(river_pcoll), intent(in) :: h
    type(river_pcoll_info) :: in
    call river_pcoll_info_get(h, in)
    call check(river_c_string(in%name) == NAME, 'info name')
    call check(in%nrecords == ntotal, 'info nrecords')
    call check(in%record_size == 32, 'info record size')
    call check(in%npartitions == nranks, 'info partitions')
    call check(in%ndisks == nranks, 'info disks')
    call check(in%replication == 2, 'info replication')
    call check(in%layout == RIVER_LAYOUT_PARTITIONED, 'info layout')
    call check(in%ordered == 1, 'info ordered')
    call check(in%block_size == BLOCK, 'info block size')
    call check(len(river_c_string(in%generation)) == 16, 'info generation')
  end subroutine check_info

  ! Read every block of partitions p with mod(p, size) == me; check each
  ! record is the one its id says; digest them into sums.
  subroutine read_all(h, me, nreaders, sums)
    type(river_pcoll), intent(in) :: h
    integer, intent(in) :: me, nreaders
    integer(c_int64_t), intent(out) :: sums(3)
    type(rec) :: blk(128)
    type(river_pcoll_info) :: in
    integer(c_size_t) :: got
    integer(c_int64_t) :: b, nb
    integer :: pp, k, bad_recs
    sums = 0
    bad_recs = 0
    call river_pcoll_info_get(h, in)
    do pp = me, in%npartitions - 1, nreaders
      call river_pcoll_blocks(h, pp, rpb, nb)
      do b = 0, nb - 1
        call river_pcoll_read_block(h, pp, b, blk, c_sizeof(blk), got, ierr)
        call check(ierr == RIVER_SUCCESS, 'read block')
        if (ierr /= RIVER_SUCCESS) cycle
        call check(got == 128 .or. b == nb - 1, 'full blocks but the last')
        do k = 1, int(got)
          if (.not. same_rec(blk(k), make_rec(blk(k)%id))) &
            bad_recs = bad_recs + 1
          call add_rec(sums, blk(k))
        end do
      end do
    end do
    call check(bad_recs == 0, 'records read back intact')
    ! A buffer smaller than a block is refused.
    if (in%npartitions > me) then
      call river_pcoll_read_block(h, me, 0_c_int64_t, blk, &
                                  c_sizeof(blk(1)) * 127, got, ierr)
      call check(ierr == RIVER_ENOBUFS, 'short buffer: ENOBUFS, got ' // &
                 river_err_name(ierr))
    end if
  end subroutine read_all

  ! Each rank begins two partitions, rank r's with orders 2(n-1-r) and
  ! 2(n-1-r)+1, partition k holding ids 1000k .. 1000k + 99 + k: the
  ! commit numbers them by order (so partition k on the disk of rank
  ! n-1-k/2), and every record reads back once. Two ranks beginning a
  ! partition of the same order fail the commit everywhere. A reader
  ! opened for the metadata only (hold=RIVER_PCOLL_HOLD_NONE) that then
  ! holds the partitions it reads (river_pcoll_hold_partitions) reads
  ! them whole after the collection is removed; a hold out of range, or
  ! a hold that is none, is RIVER_EINVAL.
  subroutine test_parts(dir, sch)
    character(len=*), intent(in) :: dir
    type(river_schema), intent(in) :: sch
    type(river_pcoll) :: h, held
    type(river_pcoll_info) :: in
    type(river_pcoll_part) :: pt
    type(rec), allocatable :: r(:)
    integer(c_int64_t) :: ord, ws(3), wt(3), rsm(3), rt(3)
    integer :: k, j, e
    ws = 0
    call river_pcoll_create(MPI_COMM_WORLD, 'fparts', sch, h, root=dir, &
                            disks='d%d', block_size=BLOCK, ordered=.true.)
    do k = 0, 1
      ord = 2 * (nranks - 1 - rank) + k
      call river_pcoll_begin_partition(h, ord, e)
      call check(e == RIVER_SUCCESS, 'begin_partition')
      allocate(r(100 + ord))
      do j = 1, size(r)
        r(j) = make_rec(1000 * ord + j - 1)
        call add_rec(ws, r(j))
      end do
      call river_pcoll_write(h, r, int(size(r), c_size_t))
      deallocate(r)
    end do
    call river_pcoll_commit(h, e)
    call check(e == RIVER_SUCCESS, 'commit of begun partitions')
    call MPI_Allreduce(ws, wt, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    call river_pcoll_open(MPI_COMM_WORLD, 'fparts', h, root=dir)
    call river_pcoll_info_get(h, in)
    call check(in%npartitions == 2 * nranks, 'begun: partitions')
    do k = 0, 2 * nranks - 1
      call river_pcoll_partition(h, k, pt)
      call check(pt%nrecords == 100 + k, 'begun: partition size')
      call check(pt%first_disk == nranks - 1 - k / 2, 'begun: its disk')
    end do
    call read_all(h, rank, nranks, rsm)
    call MPI_Allreduce(rsm, rt, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    call check(all(rt == wt), 'begun: every record read once')
    call river_pcoll_close(h)
    call river_pcoll_open(MPI_COMM_WORLD, 'fparts', h, root=dir, hold=9, &
                          ierr=e)
    call check(e == RIVER_EINVAL, 'open with hold 9: EINVAL')
    call river_pcoll_open(MPI_COMM_WORLD, 'fparts', held, root=dir, &
                          hold=RIVER_PCOLL_HOLD_NONE)
    call river_pcoll_hold_partitions(held, [2 * nranks], e)
    call check(e == RIVER_EINVAL, 'hold_partitions out of range: EINVAL')
    call river_pcoll_hold_partitions(held, [(k, k = rank, 2 * nranks - 1, &
                                             nranks)], e)
    call check(e == RIVER_SUCCESS, 'hold_partitions of this rank''s')
    call river_pcoll_create(MPI_COMM_WORLD, 'fparts', sch, h, root=dir, &
                            disks='d%d')
    call river_pcoll_begin_partition(h, int(mod(rank, 2), c_int64_t))
    call river_pcoll_commit(h, e)
    call check(e == RIVER_EINVAL, 'begun: two of one order fail')
    ! Removed by every rank together (the same outcome everywhere).
    call river_pcoll_remove_all(MPI_COMM_WORLD, 'fparts', root=dir, ierr=e)
    call check(e == RIVER_SUCCESS, 'remove_all fparts')
    call read_all(held, rank, nranks, rsm)
    call MPI_Allreduce(rsm, rt, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    call check(all(rt == wt), 'held partitions read whole after remove_all')
    call river_pcoll_close(held)
    call river_pcoll_remove_all(MPI_COMM_WORLD, 'fparts', root=dir, ierr=e)
    call check(e == RIVER_ENOTFOUND, 'remove_all fparts again: not found')
  end subroutine test_parts

  include 'test_pcoll_f_layout.inc'

  subroutine test_crc_gensort()
    integer(c_int32_t) :: crc
    integer(c_int8_t) :: g(1000), h(500)
    integer :: r
    crc = 0
    call river_crc32c(cstr('123456789'), 9_c_size_t, crc)
    call check(crc == int(z'E3069283', c_int32_t), 'crc32c of 123456789')
    crc = 0
    call river_crc32c(cstr('1234'), 4_c_size_t, crc)
    call river_crc32c(cstr('56789'), 5_c_size_t, crc)
    call check(crc == int(z'E3069283', c_int32_t), 'crc32c in pieces')

    call river_gensort_fill(0_c_int64_t, 10_c_size_t, RIVER_GENSORT_ASCII, &
                            42_c_int64_t, g)
    do r = 0, 9
      call check(all(g(r*100 + 1:r*100 + 10) >= 32) .and. &
                 all(g(r*100 + 1:r*100 + 10) <= 126), 'ascii key printable')
      call check(g(r*100 + 99) == 13 .and. g(r*100 + 100) == 10, &
                 'ascii record ends in CR LF')
    end do
    ! Rows 5..9 alone are the same bytes: any rank can make any slice.
    call river_gensort_fill(5_c_int64_t, 5_c_size_t, RIVER_GENSORT_ASCII, &
                            42_c_int64_t, h)
    call check(all(h == g(501:1000)), 'gensort slices agree')
    call river_gensort_fill(0_c_int64_t, 10_c_size_t, RIVER_GENSORT_SKEW, &
                            42_c_int64_t, g)
    ! key[10] | 00 11 | row id ... | CC DD EE FF (0xFF is -1 as int8)
    call check(g(11) == 0 .and. g(12) == 17 .and. g(100) == -1, &
               'binary record layout')
    call check(RIVER_GENSORT_RECORD_SIZE == 100, 'gensort record size')
    call river_gensort_fill(0_c_int64_t, 1_c_size_t, 4, 42_c_int64_t, g, ierr)
    call check(ierr == RIVER_EINVAL, 'gensort bad flags')
  end subroutine test_crc_gensort

  ! A single-disk collection of 300 records in 3 blocks (128, 128, 44):
  ! create/append/commit, open/stat/next (borrowed and copied) until
  ! RIVER_EOS, rewind, read_block, verify, errors; the file is removed.
  subroutine test_single(path)
    character(len=*), intent(in) :: path
    type(river_coll) :: co
    type(river_coll_info) :: ci
    type(rec), allocatable :: recs(:), got(:)
    type(rec), pointer :: view(:)
    integer(c_int8_t), allocatable :: bytes(:)
    type(c_ptr) :: ptr
    integer(c_size_t) :: nr, bufsize
    integer :: k, nblk, seen, bad_recs
    allocate(recs(300))
    do k = 1, 300
      recs(k) = make_rec(int(1000000 * rank + k, c_int64_t))
    end do
    call river_coll_create(path, 32_c_size_t, co, block_size=BLOCK, &
                           label='fortran rank ' // itoa(rank), ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'coll create')
    call river_coll_append(co, recs, 100_c_size_t)
    call river_coll_append(co, recs(101:300), 200_c_size_t)
    call river_coll_stat(co, ci)
    call check(ci%nrecords == 300, 'writer stat nrecords')
    call river_coll_commit(co, ierr)
    call check(ierr == RIVER_SUCCESS, 'coll commit')

    call river_coll_open(path, 32_c_size_t, co, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'coll open')
    call river_coll_stat(co, ci)
    call check(ci%record_size == 32 .and. ci%block_size == BLOCK .and. &
               ci%records_per_block == 128 .and. ci%nrecords == 300 .and. &
               ci%nblocks == 3, 'coll stat')
    call check(river_c_string(ci%label) == 'fortran rank ' // itoa(rank), &
               'coll label')

    ! Borrowed: a Fortran pointer onto River's buffer.
    nblk = 0
    seen = 0
    bad_recs = 0
    do
      call river_coll_next(co, ptr, nr, ierr)
      if (ierr /= RIVER_SUCCESS) exit
      nblk = nblk + 1
      call c_f_pointer(ptr, view, [nr])
      do k = 1, int(nr)
        if (.not. same_rec(view(k), recs(seen + k))) bad_recs = bad_recs + 1
      end do
      seen = seen + int(nr)
    end do
    call check(ierr == RIVER_EOS .and. nr == 0 .and. .not. c_associated(ptr), &
               'next ends with EOS')
    call check(nblk == 3 .and. seen == 300 .and. bad_recs == 0, &
               'next (borrowed) gives every record in order')
    call river_coll_next(co, ptr, nr, ierr)
    call check(ierr == RIVER_EOS, 'EOS again')
    call river_coll_next(co, ptr, nr)   ! without ierr, EOS does not stop
    call check(nr == 0, 'EOS without ierr')

    ! Copied: bytes, turned back into records.
    call river_coll_rewind(co)
    seen = 0
    bad_recs = 0
    do
      call river_coll_next(co, bytes, nr, ierr)
      if (ierr /= RIVER_SUCCESS) exit
      call check(size(bytes, kind=c_size_t) == 32 * nr, 'copied bytes size')
      got = transfer(bytes, recs(1:1), int(nr))
      do k = 1, int(nr)
        if (.not. same_rec(got(k), recs(seen + k))) bad_recs = bad_recs + 1
      end do
      seen = seen + int(nr)
    end do
    call check(ierr == RIVER_EOS .and. size(bytes) == 0, 'copied EOS')
    call check(seen == 300 .and. bad_recs == 0, 'next (copied) in order')

    ! By block index.
    deallocate(got)
    allocate(got(128))
    bufsize = size(got) * c_sizeof(got(1))
    call river_coll_read_block(co, 2_c_int64_t, got, bufsize, nr)
    call check(nr == 44, 'last block: 44 records')
    bad_recs = 0
    do k = 1, 44
      if (.not. same_rec(got(k), recs(256 + k))) bad_recs = bad_recs + 1
    end do
    call check(bad_recs == 0, 'read_block records')
    call river_coll_read_block(co, 3_c_int64_t, got, bufsize, nr, ierr)
    call check(ierr == RIVER_EINVAL, 'read_block past the end: EINVAL')
    call river_coll_read_block(co, 0_c_int64_t, got, 10 * c_sizeof(got(1)), &
                               nr, ierr)
    call check(ierr == RIVER_ENOBUFS, 'read_block small buffer: ENOBUFS')
    call river_coll_verify(co, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'coll verify')
    call river_coll_close(co, ierr)
    call check(ierr == RIVER_SUCCESS, 'coll close')
    call river_coll_close(co, ierr)
    call check(ierr == RIVER_SUCCESS, 'coll close null: no-op')
    call test_single_refusals(path, recs)
  end subroutine test_single

  ! Refusals of a single-disk collection, an abandoned writer, and the
  ! removal of test_single's file at path.
  subroutine test_single_refusals(path, recs)
    character(len=*), intent(in) :: path
    type(rec), intent(in) :: recs(:)
    type(river_coll) :: co
    call river_log_set_handler(capture, c_null_ptr)
    call river_coll_open(path, 33_c_size_t, co, ierr=ierr)
    call check(ierr == RIVER_EFORMAT, 'coll open wrong size: EFORMAT')
    call river_coll_open(path // '.none', 0_c_size_t, co, ierr=ierr)
    call check(ierr == RIVER_ENOTFOUND, 'coll open missing: ENOTFOUND')
    call river_log_reset_handler()
    call river_coll_create(path, 32_c_size_t, co, block_size=1000_c_size_t, &
                           ierr=ierr)
    call check(ierr == RIVER_EINVAL, 'coll block size not 4096n: EINVAL')
    ! An abandoned writer leaves nothing.
    call river_coll_create(path // '.x', 32_c_size_t, co)
    call river_coll_append(co, recs, 3_c_size_t)
    call river_coll_close(co)
    call check(c_unlink(cstr(path // '.x.tmp')) /= 0, 'abandoned: no tmp')
    call check(c_unlink(cstr(path)) == 0, 'remove coll file')
  end subroutine test_single_refusals
end program test_pcoll_f
