! river_gd.F90 - submodule river_gd_impl of module river: graduated
! declustering reads of a mirrored parallel collection (river/gd.h). The
! handle type river_gd keeps the read's c_ptr and the collection's record
! size, which sizes the buffer of the copying river_gd_next;
! river_gd_open builds C's river_gd_opts (gd_opts_c) from its optional
! arguments, padding the rank arrays so that C never reads past them.
submodule (river) river_gd_impl
  implicit none

  ! C's river_gd_opts, built from river_gd_open's optional arguments; the
  ! defaults are RIVER_GD_OPTS_INIT's. The rank arrays point into copies
  ! that live for the call (C copies them); perturb is borrowed until
  ! river_gd_close.
  type, bind(C) :: gd_opts_c
    integer(c_int) :: policy = RIVER_GD_BALANCED
    integer(c_int) :: mode = RIVER_GD_UNORDERED
    integer(c_int) :: outstanding = 0
    integer(c_int) :: window = 0
    type(c_ptr) :: disk_ranks = c_null_ptr
    type(c_ptr) :: client_ranks = c_null_ptr
    real(c_double) :: disk_rate = 0.0_c_double
    real(c_double) :: seek_seconds = 0.0_c_double
    type(c_ptr) :: perturb = c_null_ptr
    integer(c_int) :: run_blocks = 0
  end type gd_opts_c

  ! gd_opts_c must be the size of C's river_gd_opts (see layout_ok in
  ! river).
  integer, parameter :: opts_layout_ok = 1 / merge(1, 0, &
      c_sizeof(gd_opts_c()) == RIVER__SIZEOF_GD_OPTS)

  interface
    ! river/gd.h (open through a shim: comm is an MPI_Fint)
    function river_gd_open_c(comm, pc, opts, out) &
        bind(C, name='river__f_gd_open')
      import :: c_int, c_ptr, gd_opts_c
      integer(c_int), value :: comm
      type(c_ptr), value :: pc
      type(gd_opts_c), intent(in) :: opts
      type(c_ptr), intent(out) :: out
      integer(c_int) :: river_gd_open_c
    end function river_gd_open_c
    function river_gd_next_c(gd, records, nrecords, partition, block) &
        bind(C, name='river_gd_next')
      import :: c_int, c_ptr, c_size_t, c_int64_t
      type(c_ptr), value :: gd
      type(c_ptr), intent(out) :: records
      integer(c_size_t), intent(out) :: nrecords
      integer(c_int), intent(out) :: partition
      integer(c_int64_t), intent(out) :: block
      integer(c_int) :: river_gd_next_c
    end function river_gd_next_c
    function river_gd_stats_get_c(gd, stats) bind(C, name='river_gd_stats_get')
      import :: c_int, c_ptr, river_gd_stats
      type(c_ptr), value :: gd
      type(river_gd_stats), intent(out) :: stats
      integer(c_int) :: river_gd_stats_get_c
    end function river_gd_stats_get_c
    function river_gd_close_c(gd) bind(C, name='river_gd_close')
      import :: c_int, c_ptr
      type(c_ptr), value :: gd
      integer(c_int) :: river_gd_close_c
    end function river_gd_close_c
    function river_gd_fluid_ideal_c(rates, n, r, per_client, total) &
        bind(C, name='river_gd_fluid_ideal')
      import :: c_int, c_double
      real(c_double), intent(in) :: rates(*)
      integer(c_int), value :: n, r
      real(c_double), intent(out) :: per_client, total
      integer(c_int) :: river_gd_fluid_ideal_c
    end function river_gd_fluid_ideal_c
  end interface

contains

  ! A copy of ranks (or none) as a C int array of at least n entries, the
  ! ones past the end of ranks -1, so that C, which reads n entries,
  ! never reads past the copy and rejects a short array (RIVER_EINVAL,
  ! on every rank) instead.
  subroutine gd_rank_array(ranks, n, copy, ptr)
    integer, optional, intent(in) :: ranks(:)
    integer, intent(in) :: n
    integer(c_int), allocatable, target, intent(inout) :: copy(:)
    type(c_ptr), intent(inout) :: ptr
    if (.not. present(ranks)) return
    allocate(copy(max(size(ranks), n, 1)))
    copy = -1_c_int
    copy(1:size(ranks)) = int(ranks, c_int)
    ptr = c_loc(copy)
  end subroutine gd_rank_array

  ! Shared by the river_gd_next variants: rc of river_gd_next; partition
  ! and block are set only on RIVER_SUCCESS, records and nrecords are null
  ! and 0 on anything else.
  function gd_next_any(gd, records, nrecords, partition, block) result(rc)
    type(river_gd), intent(in) :: gd
    type(c_ptr), intent(out) :: records
    integer(c_size_t), intent(out) :: nrecords
    integer, optional, intent(out) :: partition
    integer(c_int64_t), optional, intent(out) :: block
    integer(c_int) :: rc, p
    integer(c_int64_t) :: b
    records = c_null_ptr
    nrecords = 0
    rc = river_gd_next_c(gd%ptr, records, nrecords, p, b)
    if (rc == RIVER_SUCCESS) then
      if (present(partition)) partition = int(p)
      if (present(block)) block = b
    else
      records = c_null_ptr
      nrecords = 0
    end if
  end function gd_next_any

  module procedure river_gd_open
    type(gd_opts_c) :: opts
    type(river_pcoll_info) :: info
    integer(c_int), allocatable, target :: dr(:), cr(:)
    type(c_ptr) :: out
    integer(c_int) :: rc
    integer :: info_rc
    ! The layout sizes the rank arrays and the copying river_gd_next. A
    ! handle that is not a reader fails in river_gd_open on every rank.
    call river_pcoll_info_get(pc, info, info_rc)
    if (info_rc /= RIVER_SUCCESS) info = river_pcoll_info()
    if (present(policy)) opts%policy = int(policy, c_int)
    if (present(mode)) opts%mode = int(mode, c_int)
    if (present(outstanding)) opts%outstanding = int(outstanding, c_int)
    if (present(window)) opts%window = int(window, c_int)
    call gd_rank_array(disk_ranks, int(info%ndisks), dr, opts%disk_ranks)
    call gd_rank_array(client_ranks, int(info%npartitions), cr, &
                       opts%client_ranks)
    if (present(disk_rate)) opts%disk_rate = disk_rate
    if (present(seek_seconds)) opts%seek_seconds = seek_seconds
    if (present(perturb)) opts%perturb = perturb%ptr
    if (present(run_blocks)) opts%run_blocks = int(run_blocks, c_int)
    out = c_null_ptr
    rc = river_gd_open_c(int(comm%MPI_VAL, c_int), pc%ptr, opts, out)
    if (rc == RIVER_SUCCESS) then
      gd%ptr = out
      gd%record_size = info%record_size
    end if
    call river_check(rc, 'river_gd_open', ierr)
  end procedure river_gd_open

  module procedure river_gd_next_ptr
    integer(c_int) :: rc
    rc = gd_next_any(gd, records, nrecords, partition, block)
    if (rc == RIVER_EOS) then
      if (present(ierr)) ierr = RIVER_EOS
      return
    end if
    call river_check(rc, 'river_gd_next', ierr)
  end procedure river_gd_next_ptr

  module procedure river_gd_next_bytes
    type(c_ptr) :: r
    integer(c_size_t) :: n, nbytes
    integer(c_int) :: rc
    rc = gd_next_any(gd, r, n, partition, block)
    nrecords = 0
    if (rc /= RIVER_SUCCESS) then
      call bytes_from(c_null_ptr, 0_c_size_t, buf)
      if (rc == RIVER_EOS) then
        if (present(ierr)) ierr = RIVER_EOS
        return
      end if
    else
      nbytes = n * gd%record_size
      call bytes_from(r, nbytes, buf)
      nrecords = n
    end if
    call river_check(rc, 'river_gd_next', ierr)
  end procedure river_gd_next_bytes

  module procedure river_gd_stats_get
    type(river_gd_stats) :: s
    integer(c_int) :: rc
    rc = river_gd_stats_get_c(gd%ptr, s)
    if (rc == RIVER_SUCCESS) stats = s
    call river_check(rc, 'river_gd_stats_get', ierr)
  end procedure river_gd_stats_get

  module procedure river_gd_close
    integer(c_int) :: rc
    rc = river_gd_close_c(gd%ptr)
    gd%ptr = c_null_ptr
    gd%record_size = 0
    call river_check(rc, 'river_gd_close', ierr)
  end procedure river_gd_close

  module procedure river_gd_fluid_ideal
    real(c_double) :: pc, tot
    integer(c_int) :: rc
    if (n > size(rates)) then
      rc = RIVER_EINVAL
    else
      rc = river_gd_fluid_ideal_c(rates, int(n, c_int), int(r, c_int), pc, &
                                  tot)
    end if
    if (rc == RIVER_SUCCESS) then
      if (present(per_client)) per_client = pc
      if (present(total)) total = tot
    end if
    call river_check(rc, 'river_gd_fluid_ideal', ierr)
  end procedure river_gd_fluid_ideal

end submodule river_gd_impl
