! test_dq_f - module river's distributed queues, throttle and
! perturbation specs from Fortran with mpi_f08, on 4 ranks: ranks 0-1
! produce records of a bind(C) derived type, ranks 2-3 consume them until
! RIVER_EOS, under RIVER_DQ_PUSH, RIVER_DQ_STATIC and RIVER_DQ_EXCHANGE
! (with a Fortran partition function) in turn. Every record arrives
! exactly once (order-independent checksums reduced over the ranks), in
! FIFO order per producer on each consumer, with stats that agree with
! what was put and got; bad arguments come back through ierr; a token
! bucket takes about as long as its rate says; perturbation specs parse.
module test_dq_f_util
  use, intrinsic :: iso_c_binding
  implicit none

  ! 8 + 4 + 4 + 8 + 8 = 32 bytes, every field on its natural alignment,
  ! so no padding (checked with c_sizeof).
  type, bind(C) :: drec
    integer(c_int64_t) :: id
    integer(c_int32_t) :: producer
    integer(c_int32_t) :: k
    integer(c_int64_t) :: hash
    integer(c_int64_t) :: filler
  end type drec

  ! 40 bytes: not the queue's 32-byte records (issue 37: a put of it is
  ! refused, naming both sizes).
  type, bind(C) :: wide
    integer(c_int64_t) :: v(5)
  end type wide

  ! Times the partition function was called (through its ctx).
  integer(c_int64_t), target :: part_calls = 0

contains

  ! A hash of id, for the checksums and to check each record's contents.
  pure function rec_hash(id) result(h)
    integer(c_int64_t), intent(in) :: id
    integer(c_int64_t) :: h
    h = ieor(id * 40503_c_int64_t, ishft(id, 11)) + 12345_c_int64_t
    h = iand(h, int(z'7FFFFFFF', c_int64_t))
  end function rec_hash

  pure function make_rec(producer, k) result(r)
    integer, intent(in) :: producer, k
    type(drec) :: r
    r%id = int(producer, c_int64_t) * 1000000_c_int64_t + k
    r%producer = int(producer, c_int32_t)
    r%k = int(k, c_int32_t)
    r%hash = rec_hash(r%id)
    r%filler = not(r%id)
  end function make_rec

  ! RIVER_DQ_EXCHANGE: consumer mod(id, nconsumers); ctx counts calls.
  function part_by_id(record, nconsumers, ctx) result(c) bind(C)
    type(c_ptr), value :: record
    integer(c_int), value :: nconsumers
    type(c_ptr), value :: ctx
    integer(c_int) :: c
    type(drec), pointer :: r
    integer(c_int64_t), pointer :: calls
    call c_f_pointer(record, r)
    call c_f_pointer(ctx, calls)
    calls = calls + 1
    c = int(mod(r%id, int(nconsumers, c_int64_t)), c_int)
  end function part_by_id
end module test_dq_f_util

program test_dq_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use river
  use ftest
  use test_dq_f_util
  implicit none

  integer, parameter :: NPROD = 2, NCONS = 2, NPER = 3000
  integer(c_size_t), parameter :: MSG_SIZE = 1024
  integer :: rank, nranks, ierr
  logical :: producer, consumer
  type(drec) :: one

  call ftest_init(rank, nranks)
  call river_init(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_init')
  if (nranks /= NPROD + NCONS) then
    if (rank == 0) write (0, '(a)') 'test_dq_f needs 4 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  producer = rank < NPROD
  consumer = .not. producer
  call check(c_sizeof(one) == 32_c_size_t, 'drec has no padding')

  call check(RIVER_DQ_PRODUCER /= RIVER_DQ_CONSUMER, 'role constants')
  call check(RIVER_DQ_DEFAULT_CREDITS > 0, 'default credits')
  call check(RIVER_DQ_DEFAULT_MESSAGE_SIZE > 0, 'default message size')

  call run_round(RIVER_DQ_PUSH, 'push')
  call run_round(RIVER_DQ_STATIC, 'static')
  call run_round(RIVER_DQ_EXCHANGE, 'exchange')
  call bad_arguments()
  call throttle_tests()
  call perturb_tests()

  call river_finalize(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_finalize')
  call ftest_finish('test_dq_f')

contains

  ! One queue from the producers to the consumers under policy.
  subroutine run_round(policy, pname)
    integer, intent(in) :: policy
    character(len=*), intent(in) :: pname
    type(river_dq) :: q
    type(river_dq_stats) :: st
    integer(c_int64_t) :: sums(3), gsums(3), expect(3), counts(2), gcounts(2)
    integer(c_int64_t), pointer :: per(:)
    integer(c_int64_t) :: last(0:NPROD - 1), nmsgs
    integer :: role, p, k
    character(len=:), allocatable :: tag

    tag = pname // ': '
    role = merge(RIVER_DQ_PRODUCER, RIVER_DQ_CONSUMER, producer)
    part_calls = 0
    if (policy == RIVER_DQ_EXCHANGE) then
      call river_dq_create(MPI_COMM_WORLD, role, c_sizeof(one), q, &
                           policy=policy, credits=2, message_size=MSG_SIZE, &
                           partition=part_by_id, &
                           partition_ctx=c_loc(part_calls), ierr=ierr)
    else
      call river_dq_create(MPI_COMM_WORLD, role, c_sizeof(one), q, &
                           policy=policy, credits=2, message_size=MSG_SIZE, &
                           seed=7_c_int64_t, ierr=ierr)
    end if
    call check(ierr == RIVER_SUCCESS, tag // 'create')
    if (ierr /= RIVER_SUCCESS) return

    sums = 0
    last = -1
    nmsgs = 0
    if (producer) then
      call produce(q, policy == RIVER_DQ_STATIC .and. rank == 1, &
                   policy /= RIVER_DQ_EXCHANGE, tag)
      if (policy == RIVER_DQ_EXCHANGE) &
        call check(part_calls >= NPER, tag // 'partition called per record')
    else if (policy == RIVER_DQ_EXCHANGE) then
      call consume_try(q, sums, last, nmsgs, tag)
    else if (rank == NPROD) then
      call consume_ptr(q, policy, sums, last, nmsgs, tag)
    else
      call consume_bytes(q, sums, last, nmsgs, tag)
    end if

    ! Stats, then exactly once over all ranks.
    call river_dq_stats_get(q, st, ierr)
    call check(ierr == RIVER_SUCCESS, tag // 'stats')
    call check(st%nproducers == NPROD .and. st%nconsumers == NCONS, &
               tag // 'stats nproducers/nconsumers')
    ! The last field: a layout that disagreed with C's would misplace it.
    call check(st%peer_steps > 0, tag // 'stats peer_steps')
    if (producer) then
      call check(st%producer_index == rank .and. st%consumer_index == -1, &
                 tag // 'stats producer index')
      call check(st%records_out == NPER, tag // 'stats records_out')
      call check(st%bytes_out == NPER * c_sizeof(one), tag // 'stats bytes_out')
      call check(st%records_in == 0 .and. st%messages_in == 0, &
                 tag // 'stats producer got nothing')
      call check(st%messages_out * MSG_SIZE >= NPER * c_sizeof(one), &
                 tag // 'stats messages_out')
      call check(c_associated(st%msgs_to), tag // 'stats msgs_to')
      if (c_associated(st%msgs_to)) then
        call c_f_pointer(st%msgs_to, per, [st%nconsumers])
        call check(sum(per) == st%messages_out, tag // 'stats msgs_to sum')
      end if
      counts = [st%records_out, 0_c_int64_t]
    else
      call check(st%consumer_index == rank - NPROD .and. &
                 st%producer_index == -1, tag // 'stats consumer index')
      call check(st%records_in == sums(1), tag // 'stats records_in')
      call check(st%bytes_in == sums(1) * c_sizeof(one), tag // 'stats bytes_in')
      call check(st%messages_in == nmsgs, tag // 'stats messages_in')
      call check(c_associated(st%msgs_from), tag // 'stats msgs_from')
      if (c_associated(st%msgs_from)) then
        call c_f_pointer(st%msgs_from, per, [st%nproducers])
        call check(sum(per) == st%messages_in, tag // 'stats msgs_from sum')
      end if
      counts = [0_c_int64_t, st%records_in]
    end if
    call MPI_Allreduce(counts, gcounts, 2, MPI_INTEGER8, MPI_SUM, &
                       MPI_COMM_WORLD)
    call check(gcounts(1) == NPROD * NPER .and. gcounts(2) == NPROD * NPER, &
               tag // 'records out = records in')

    call MPI_Allreduce(sums, gsums, 3, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    expect = 0
    do p = 0, NPROD - 1
      do k = 0, NPER - 1
        one = make_rec(p, k)
        expect = expect + [1_c_int64_t, one%id, one%hash]
      end do
    end do
    call check(gsums(1) == expect(1), tag // 'exactly once: count')
    call check(gsums(2) == expect(2), tag // 'exactly once: sum of ids')
    call check(gsums(3) == expect(3), tag // 'exactly once: sum of hashes')

    call river_dq_destroy(q, ierr)
    call check(ierr == RIVER_SUCCESS, tag // 'destroy')
  end subroutine run_round

  ! Put NPER records in batches of 1..37, by river_dq_put (with
  ! zero_copy, even batches by river_dq_reserve + river_dq_commit, written
  ! in place; not for EXCHANGE) or, with
  ! use_try, river_dq_try_put retried on RIVER_EAGAIN; then close.
  subroutine produce(q, use_try, zero_copy, tag)
    type(river_dq), intent(in) :: q
    logical, intent(in) :: use_try, zero_copy
    character(len=*), intent(in) :: tag
    type(drec) :: batch(37)
    type(drec), pointer :: dst(:)
    type(c_ptr) :: slot
    integer(c_size_t) :: room
    integer :: k, n, i, again
    k = 0
    n = 1
    again = 0
    call river_dq_set_tag(q, 1000_c_int64_t + rank, ierr)
    call check(ierr == RIVER_SUCCESS, tag // 'set_tag before the first put')
    do while (k < NPER)
      n = min(mod(n * 7 + 3, 37) + 1, NPER - k)
      do i = 1, n
        batch(i) = make_rec(rank, k + i - 1)
      end do
      if (use_try) then
        do
          call river_dq_try_put(q, batch, int(n, c_size_t), ierr)
          if (ierr /= RIVER_EAGAIN) exit
          again = again + 1
        end do
        call check(ierr == RIVER_SUCCESS, tag // 'try_put')
      else if (zero_copy .and. mod(n, 2) == 0) then
        ! Zero-copy: write into the queue's message, then commit.
        call river_dq_reserve(q, slot, room, ierr)
        call check(ierr == RIVER_SUCCESS .and. room >= 1, tag // 'reserve')
        if (ierr /= RIVER_SUCCESS) exit
        n = min(n, int(room))
        call c_f_pointer(slot, dst, [n])
        dst(1:n) = batch(1:n)
        call river_dq_commit(q, int(n, c_size_t), ierr)
        call check(ierr == RIVER_SUCCESS, tag // 'commit')
      else
        call river_dq_put(q, batch, int(n, c_size_t), ierr)
        call check(ierr == RIVER_SUCCESS, tag // 'put')
      end if
      k = k + n
    end do
    call river_dq_close(q, ierr)
    call check(ierr == RIVER_SUCCESS, tag // 'close')
    call river_dq_put(q, batch, 1_c_size_t, ierr)
    call check(ierr == RIVER_ESTATE, tag // 'put after close: RIVER_ESTATE')
  end subroutine produce

  ! Check and count one received record from producer `from`.
  subroutine take(r, from, sums, last, tag)
    type(drec), intent(in) :: r
    integer, intent(in) :: from
    integer(c_int64_t), intent(inout) :: sums(3), last(0:NPROD - 1)
    character(len=*), intent(in) :: tag
    type(drec) :: want
    if (r%producer < 0 .or. r%producer >= NPROD .or. r%producer /= from) then
      call check(.false., tag // 'record from the producer get named')
      return
    end if
    want = make_rec(int(r%producer), int(r%k))
    call check(r%id == want%id .and. r%hash == want%hash .and. &
               r%filler == want%filler, tag // 'record contents')
    call check(r%id > last(from), tag // 'FIFO per producer')
    last(from) = r%id
    sums = sums + [1_c_int64_t, r%id, r%hash]
  end subroutine take

  ! Consumer: river_dq_get, borrowed, then release, until RIVER_EOS.
  subroutine consume_ptr(q, policy, sums, last, nmsgs, tag)
    type(river_dq), intent(in) :: q
    integer, intent(in) :: policy
    integer(c_int64_t), intent(inout) :: sums(3), last(0:NPROD - 1), nmsgs
    character(len=*), intent(in) :: tag
    type(c_ptr) :: p
    integer(c_size_t) :: n
    type(drec), pointer :: recs(:)
    integer(c_int64_t) :: qtag
    integer :: from, i
    do
      call river_dq_get(q, p, n, from, ierr)
      if (ierr == RIVER_EOS) exit
      call check(ierr == RIVER_SUCCESS, tag // 'get')
      if (ierr /= RIVER_SUCCESS) exit
      call river_dq_tag(q, qtag, ierr)
      call check(ierr == RIVER_SUCCESS .and. qtag == 1000_c_int64_t + from, &
                 tag // 'the producer''s DQ tag')
      call check(c_associated(p) .and. n > 0, tag // 'get gives records')
      call check(n * c_sizeof(one) <= MSG_SIZE, tag // 'message size')
      nmsgs = nmsgs + 1
      call c_f_pointer(p, recs, [n])
      do i = 1, int(n)
        call take(recs(i), from, sums, last, tag)
      end do
      call river_dq_release(q, ierr)
      call check(ierr == RIVER_SUCCESS, tag // 'release')
    end do
    ! EOS again, and without ierr it is a status, not a stop.
    call river_dq_get(q, p, n)
    call check(.not. c_associated(p) .and. n == 0, tag // 'get after EOS')
    call river_dq_get(q, p, n, ierr=ierr)
    call check(ierr == RIVER_EOS, tag // 'RIVER_EOS again')
    if (policy == RIVER_DQ_PUSH) then
      call river_dq_release(q, ierr)
      call check(ierr == RIVER_SUCCESS, tag // 'release with none held')
    end if
  end subroutine consume_ptr

  ! Consumer: river_dq_get, copied into bytes, until RIVER_EOS; the next
  ! get releases the previous message.
  subroutine consume_bytes(q, sums, last, nmsgs, tag)
    type(river_dq), intent(in) :: q
    integer(c_int64_t), intent(inout) :: sums(3), last(0:NPROD - 1), nmsgs
    character(len=*), intent(in) :: tag
    integer(c_int8_t), allocatable :: buf(:)
    type(drec), allocatable :: recs(:)
    integer(c_size_t) :: n
    integer :: from, i
    do
      call river_dq_get(q, buf, n, from, ierr)
      if (ierr == RIVER_EOS) exit
      call check(ierr == RIVER_SUCCESS, tag // 'get bytes')
      if (ierr /= RIVER_SUCCESS) exit
      call check(size(buf, kind=c_size_t) == n * c_sizeof(one), &
                 tag // 'get bytes size')
      nmsgs = nmsgs + 1
      recs = transfer(buf, [make_rec(0, 0)])
      call check(size(recs, kind=c_size_t) == n, tag // 'get bytes records')
      do i = 1, size(recs)
        call take(recs(i), from, sums, last, tag)
      end do
    end do
    call check(allocated(buf), tag // 'buf allocated at EOS')
    if (allocated(buf)) call check(size(buf) == 0, tag // 'buf empty at EOS')
    call river_dq_get(q, buf, n)
    call check(n == 0 .and. size(buf) == 0, tag // 'get bytes after EOS')
    if (allocated(recs)) deallocate(recs)
    deallocate(buf)
  end subroutine consume_bytes

  ! Consumer: river_dq_try_get (borrowed on rank 2, copied on rank 3),
  ! retried on RIVER_EAGAIN, until RIVER_EOS; checks the partition.
  subroutine consume_try(q, sums, last, nmsgs, tag)
    type(river_dq), intent(in) :: q
    integer(c_int64_t), intent(inout) :: sums(3), last(0:NPROD - 1), nmsgs
    character(len=*), intent(in) :: tag
    integer(c_int8_t), allocatable :: buf(:)
    type(drec), allocatable :: recs(:)
    type(drec), pointer :: precs(:)
    type(c_ptr) :: p
    integer(c_size_t) :: n
    integer :: from, i, ci
    ci = rank - NPROD
    do
      if (ci == 0) then
        call river_dq_try_get(q, p, n, from, ierr)
      else
        call river_dq_try_get(q, buf, n, from, ierr)
      end if
      if (ierr == RIVER_EOS) exit
      if (ierr == RIVER_EAGAIN) then
        call check(n == 0, tag // 'try_get EAGAIN gives nothing')
        cycle
      end if
      call check(ierr == RIVER_SUCCESS, tag // 'try_get')
      if (ierr /= RIVER_SUCCESS) exit
      nmsgs = nmsgs + 1
      if (ci == 0) then
        call c_f_pointer(p, precs, [n])
        recs = precs
      else
        recs = transfer(buf, [make_rec(0, 0)])
      end if
      do i = 1, size(recs)
        call take(recs(i), from, sums, last, tag)
        call check(mod(recs(i)%id, int(NCONS, c_int64_t)) == ci, &
                   tag // 'record at the consumer its partition names')
      end do
      call river_dq_release(q, ierr)
      call check(ierr == RIVER_SUCCESS, tag // 'release')
    end do
    ! RIVER_EOS from try_get without ierr is not a stop either.
    call river_dq_try_get(q, p, n)
    call check(n == 0, tag // 'try_get after EOS')
    if (allocated(recs)) deallocate(recs)
    if (allocated(buf)) deallocate(buf)
  end subroutine consume_try

  subroutine bad_arguments()
    type(river_dq) :: q
    type(c_ptr) :: p
    integer(c_size_t) :: n
    integer(c_int64_t) :: unit
    integer :: role
    ! record_size 0 is RIVER_EINVAL, on every rank.
    role = merge(RIVER_DQ_PRODUCER, RIVER_DQ_CONSUMER, producer)
    call river_dq_create(MPI_COMM_WORLD, role, 0_c_size_t, q, ierr=ierr)
    call check(ierr == RIVER_EINVAL, 'dq create record_size 0: RIVER_EINVAL')
    ! A bad policy, likewise.
    call river_dq_create(MPI_COMM_WORLD, role, c_sizeof(one), q, &
                         policy=99, ierr=ierr)
    call check(ierr == RIVER_EINVAL, 'dq create policy 99: RIVER_EINVAL')
    ! Wrong role for the call.
    call river_dq_create(MPI_COMM_WORLD, role, c_sizeof(one), q, &
                         policy=RIVER_DQ_STATIC, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'dq create for bad calls')
    if (producer) then
      call river_dq_get(q, p, n, ierr=ierr)
      call check(ierr == RIVER_EINVAL, 'get on a producer: RIVER_EINVAL')
      call river_dq_end_unit(q, ierr)
      call check(ierr == RIVER_EINVAL, 'end_unit without PULL: RIVER_EINVAL')
      call river_dq_tag(q, unit, ierr)
      call check(ierr == RIVER_EINVAL, 'tag on a producer: RIVER_EINVAL')
      call river_dq_set_tag(q, 77_c_int64_t, ierr)
      call check(ierr == RIVER_SUCCESS, 'set_tag before a put')
      call river_log_set_handler(capture, c_null_ptr)
      wanted = 0
      want = 'river_dq_put: records of 40 bytes given (the c_sizeof of ' // &
             'their derived type), the record size is 32 bytes'
      call river_dq_put(q, [wide([integer(c_int64_t) :: 1, 2, 3, 4, 5])], &
                        1_c_size_t, ierr)
      call check(ierr == RIVER_EINVAL .and. wanted == 1, &
                 'put of a 40-byte type on 32-byte records: refused, both named')
      want = 'river_dq_try_put: records of 40 bytes given'
      call river_dq_try_put(q, [wide([integer(c_int64_t) :: 1, 2, 3, 4, 5])], &
                            1_c_size_t, ierr)
      call check(ierr == RIVER_EINVAL .and. wanted == 2, &
                 'try_put of a 40-byte type: refused, both named')
      deallocate(want)
      call river_log_reset_handler()
      call river_dq_try_end_unit(q, ierr)
      call check(ierr == RIVER_EINVAL, 'try_end_unit without PULL: EINVAL')
      ! Close by steps: RIVER_EAGAIN (a status) until done, then ESTATE.
      do
        call river_dq_try_close(q, ierr)
        if (ierr /= RIVER_EAGAIN) exit
      end do
      call check(ierr == RIVER_SUCCESS, 'try_close: RIVER_SUCCESS')
      call river_dq_try_close(q, ierr)
      call check(ierr == RIVER_ESTATE, 'try_close again: RIVER_ESTATE')
    else
      call river_dq_put(q, [one], 1_c_size_t, ierr)
      call check(ierr == RIVER_EINVAL, 'put on a consumer: RIVER_EINVAL')
      call river_dq_try_close(q, ierr)
      call check(ierr == RIVER_EINVAL, 'try_close on a consumer: EINVAL')
      call river_dq_try_reserve(q, p, n, ierr)
      call check(ierr == RIVER_EINVAL .and. .not. c_associated(p), &
                 'try_reserve on a consumer: RIVER_EINVAL')
      call river_dq_try_commit(q, 0_c_size_t, ierr)
      call check(ierr == RIVER_EINVAL, 'try_commit on a consumer: EINVAL')
      call river_dq_unit(q, unit, ierr=ierr)
      call check(ierr == RIVER_EINVAL, 'unit without PULL: RIVER_EINVAL')
      call river_dq_set_tag(q, 1_c_int64_t, ierr)
      call check(ierr == RIVER_EINVAL, 'set_tag on a consumer: EINVAL')
      call river_dq_tag(q, unit, ierr)
      call check(ierr == RIVER_ESTATE, 'tag before a message: ESTATE')
      do
        call river_dq_get(q, p, n, ierr=ierr)
        if (ierr /= RIVER_SUCCESS) exit
      end do
      call check(ierr == RIVER_EOS, 'empty queue: RIVER_EOS')
    end if
    call river_dq_destroy(q, ierr)
    call check(ierr == RIVER_SUCCESS, 'destroy after bad calls')
  end subroutine bad_arguments

  subroutine throttle_tests()
    type(river_throttle) :: t
    real(c_double) :: rate, slept, t0, dt
    call river_throttle_create(-1.0_c_double, t, ierr=ierr)
    call check(ierr == RIVER_EINVAL, 'throttle rate -1: RIVER_EINVAL')
    ! 10 MB/s with the default burst (rate/20 = 500 kB, at least 64 KiB):
    ! the bucket never holds more than that, so N bytes take at least
    ! (N - 500 kB) / rate from any start, however long a loaded machine
    ! holds this rank off its core between calls (a pause only refills
    ! the bucket, up to the burst). Each lower bound below is that, so it
    ! holds under any load; the upper ones (2 s) are wide for load and
    ! catch a rate or count passed in the wrong units (1000 times: 100 s).
    ! test_throttle.c holds the rate itself to 15%.
    call river_throttle_create(1.0e7_c_double, t)
    call river_throttle_rate(t, rate)
    call check(abs(rate - 1.0e7_c_double) < 1.0_c_double, 'throttle rate')
    t0 = river_wtime()
    call river_throttle_consume(t, 500000_c_size_t)
    call river_throttle_consume(t, 1000000_c_size_t, ierr)
    dt = river_wtime() - t0
    call check(ierr == RIVER_SUCCESS, 'throttle consume')
    call check(dt >= 0.0999_c_double .and. dt < 2.0_c_double, &
               'throttle: 1.5 MB at 10 MB/s, 500 kB burst, takes 0.1 s')
    ! The 1 MB call began with at most 500 kB banked: it slept for the
    ! rest (slept counts from before each wait, late wake-ups included).
    call river_throttle_slept(t, slept)
    call check(slept >= 0.0499_c_double &
               .and. slept <= dt + 1.0e-6_c_double, 'throttle slept')
    ! Half speed: 1.5 MB at 5 MB/s take at least 0.2 s, whatever the
    ! bucket banked; at the full rate (the factor lost) at most 0.15 s.
    call river_throttle_set_factor(t, 0.5_c_double)
    call river_throttle_rate(t, rate)
    call check(abs(rate - 5.0e6_c_double) < 1.0_c_double, 'throttle factor')
    t0 = river_wtime()
    call river_throttle_consume(t, 1500000_c_size_t)
    dt = river_wtime() - t0
    call check(dt >= 0.1999_c_double .and. dt < 2.0_c_double, &
               'throttle: 1.5 MB at 5 MB/s, 500 kB burst, takes 0.2 s')
    call river_throttle_set_factor(t, 0.0_c_double, ierr)
    call check(ierr == RIVER_EINVAL, 'throttle factor 0: RIVER_EINVAL')
    call river_throttle_destroy(t)
    call river_throttle_destroy(t)
  end subroutine throttle_tests

  subroutine perturb_tests()
    type(river_perturb) :: p
    type(river_cpu_hog) :: h
    real(c_double) :: f
    integer :: k
    call river_perturb_parse('disk:3=0.5;cpu:0-1=0.25@2s', p)
    call river_perturb_factor(p, RIVER_PERTURB_DISK, 3, 0.0_c_double, f)
    call check(abs(f - 0.5_c_double) < 1.0e-12_c_double, 'perturb disk 3')
    call river_perturb_factor(p, RIVER_PERTURB_DISK, 2, 0.0_c_double, f)
    call check(abs(f - 1.0_c_double) < 1.0e-12_c_double, 'perturb disk 2')
    call river_perturb_factor(p, RIVER_PERTURB_CPU, 1, 1.0_c_double, f)
    call check(abs(f - 1.0_c_double) < 1.0e-12_c_double, &
               'perturb cpu 1 before 2 s')
    call river_perturb_factor(p, RIVER_PERTURB_CPU, 0, 2.5_c_double, f)
    call check(abs(f - 0.25_c_double) < 1.0e-12_c_double, &
               'perturb cpu 0 after 2 s')
    call river_perturb_factor(p, RIVER_PERTURB_CPU, 2, 2.5_c_double, f)
    call check(abs(f - 1.0_c_double) < 1.0e-12_c_double, 'perturb cpu 2')
    call river_perturb_count(p, RIVER_PERTURB_DISK, k)
    call check(k == 1, 'perturb count disk')
    call river_perturb_count(p, RIVER_PERTURB_CPU, k)
    call check(k == 2, 'perturb count cpu')
    call river_perturb_max_index(p, RIVER_PERTURB_DISK, k)
    call check(k == 3, 'perturb max index disk')
    call river_perturb_max_index(p, RIVER_PERTURB_CPU, k)
    call check(k == 1, 'perturb max index cpu')
    call river_perturb_destroy(p)
    call river_perturb_destroy(p)
    call river_perturb_parse('', p, ierr)
    call check(ierr == RIVER_SUCCESS, 'perturb empty spec')
    call river_perturb_max_index(p, RIVER_PERTURB_DISK, k)
    call check(k == -1, 'perturb empty spec max index')
    call river_perturb_destroy(p)
    if (rank == 0) then
      call river_perturb_parse('disk:3=zero', p, ierr)
      call check(ierr == RIVER_EFORMAT, 'perturb bad spec: RIVER_EFORMAT')
      call river_perturb_parse('gpu:1=0.5', p, ierr)
      call check(ierr == RIVER_EFORMAT, 'perturb bad kind: RIVER_EFORMAT')
      ! A real CPU hog, briefly (RIVER_ETOPO where hwloc cannot bind).
      call river_cpu_hog_start(0.1_c_double, h, ierr)
      call check(ierr == RIVER_SUCCESS .or. ierr == RIVER_ETOPO, &
                 'cpu hog start')
      call river_cpu_hog_stop(h, ierr)
      call check(ierr == RIVER_SUCCESS, 'cpu hog stop')
      call river_cpu_hog_start(1.5_c_double, h, ierr)
      call check(ierr == RIVER_EINVAL, 'cpu hog 1.5: RIVER_EINVAL')
    end if
  end subroutine perturb_tests

end program test_dq_f
